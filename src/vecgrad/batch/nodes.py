"""The dependence graph's record (see `deps`, which builds it, and `agenda`, which schedules
it): nodes as parallel lists indexed by node id in program order, their kinds and interned
group keys, their edges, and each buffer's region-tracking state."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Atom, Eqn, Graph, Var, VarTable

EQN, READ, BREAD, WRITE, SUM, SNAP, JOIN = "eqn", "read", "bread", "write", "sum", "snap", "join"


class Buffer:
    """One chain of versions: its base value and the region-tracking state."""

    __slots__ = (
        "base",
        "base_node",
        "last_whole",
        "ndim",
        "run",
        "run_set",
        "rv",
        "shape",
        "since_whole",
        "whole_join",
        "whole_pending",
        "wv",
    )

    def __init__(self, base: Atom, ndim: int):
        self.base = base
        self.shape = base.aval.shape
        self.ndim = ndim
        self.wv: np.ndarray = np.empty(0)  # per element: the node that wrote it last
        self.rv: np.ndarray = np.empty(0)  # per element: its reads since (a read or a join)
        self.base_node = -1
        self.run: list[int] | None = None  # the open run of additions
        self.run_set: set[int] = set()
        self.last_whole = -1  # the last snapshot
        self.since_whole: list[int] = []  # writes since it
        self.whole_pending: list[int] = []
        self.whole_join = -1


class Plan:
    """Nodes (parallel lists, indexed by node id in program order) and their edges."""

    def __init__(self, g: Graph):
        self.g = g
        self.kind: list[str] = []
        self.key: list[Any] = []
        self.out: list[Var | None] = []
        self.ops: list[tuple] = []
        self.eqn: list[Eqn | None] = []
        self.info: list[Any] = []
        self.members: list[int] = []
        self.succ: list[list[int]] = []
        self.npred: list[int] = []
        self.dead: list[bool] = []
        self.alias: dict[Var, Atom] = {}
        self.buffers: list[Buffer] = []
        self.prod = VarTable(g.eqns)  # value var -> the node computing it
        self.key_ids: dict[Any, int] = {}  # keys are interned: key[i] is a small int
        self.key_of: list[Any] = []  # and key_of[key[i]] the key itself

    def add(self, kind: str, key: Any, out: Var | None, ops: tuple, eqn: Eqn | None,
            info: Any = None, members: int = 1) -> int:
        i = len(self.kind)
        self.kind.append(kind)
        if key is None:
            key = (None, i)  # a node that batches with no other
        ids = self.key_ids
        k = ids.get(key)
        if k is None:
            k = ids[key] = len(ids)
            self.key_of.append(key)
        self.key.append(k)
        self.out.append(out)
        self.ops.append(ops)
        self.eqn.append(eqn)
        self.info.append(info)
        self.members.append(members)
        self.succ.append([])
        self.npred.append(0)
        self.dead.append(False)
        if out is not None:
            self.prod[out] = i
        return i

    def edge(self, u: int, v: int) -> None:
        if u >= 0 and u != v and not self.dead[u]:
            self.succ[u].append(v)
            self.npred[v] += 1

    def resolve(self, a: Atom) -> Atom:
        alias = self.alias
        while a.__class__ is Var and a in alias:
            a = alias[a]
        return a

    def data_edges(self, i: int, atoms: tuple) -> None:
        for a in atoms:
            p = self.prod.get(a) if a.__class__ is Var else None
            if p is not None:
                self.edge(p, i)

    def kill(self, u: int) -> None:
        for s in self.succ[u]:
            self.npred[s] -= 1
        self.succ[u] = []
        self.dead[u] = True


__all__ = ["BREAD", "EQN", "JOIN", "READ", "SNAP", "SUM", "WRITE", "Buffer", "Plan"]
