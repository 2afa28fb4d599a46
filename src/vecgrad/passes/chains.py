"""Before batching: see through buffer writes and collapse chains into collective nodes.

- Read forwarding: `y = x.at[w].set(v); y[r]` reads `x[r]` when r and w are disjoint, and
  reads `v` when r == w. This is what lets a loop that reads, transforms and writes back one
  slice per iteration (`out[:, :, k] = softmax(out[:, :, k])`) batch.
- Write chains: consecutive writes into one buffer with the same index pattern become one
  `write` node: a scatter of all the values at once.
- Add chains: `x0 + x1 + ... + xk` over terms of one shape (Python's `sum`, `acc += f(x)`)
  becomes one `sum` node.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Params, Src, Var, uses
from ..primitives import Adv, Sl


class Node:
    """An equation, or a collective node standing for a chain of equations. (A slotted class:
    the batch pass makes one per traced equation.)"""

    __slots__ = ("depth", "eqn", "eqns", "kind", "members", "operands", "out", "src", "srcs",
                 "write")

    def __init__(self, kind: str, out: Var, operands: list[Atom], eqn: Eqn | None = None,
                 src: Src | None = None, write: tuple | None = None, srcs: list | None = None,
                 members: int = 1, eqns: list | None = None):
        self.kind = kind  # "eqn" | "sum" | "write"
        self.out = out
        self.operands = operands  # "write": [base, value_0, ...]; "sum": the terms
        self.eqn = eqn
        self.src = src
        self.write = write  # (prim, pattern, int_axes, positions (k x r))
        self.depth = 0
        self.members = members  # how many user-level operations the node stands for
        self.srcs = srcs
        self.eqns = eqns  # the equations a collective node replaces


@functools.lru_cache(maxsize=65536)
def pattern_of(idx: tuple) -> tuple[tuple, tuple[int, ...], tuple[int, ...]]:
    """Split a basic index into (pattern with ints as -1, int axes, int values)."""
    axes = tuple(i for i, k in enumerate(idx) if isinstance(k, int))
    pat = tuple(-1 if isinstance(k, int) else k for k in idx)
    return pat, axes, tuple(idx[i] for i in axes)


def _disjoint(a: tuple, b: tuple) -> bool:
    """True when two basic indices of one array select no common element."""
    ia, ib = [k for k in a if k is not None], [k for k in b if k is not None]
    for x, y in zip(ia, ib):
        rx = range(x, x + 1) if isinstance(x, int) else range(*x)
        ry = range(y, y + 1) if isinstance(y, int) else range(*y)
        if not set(rx).intersection(ry) if min(len(rx), len(ry)) < 64 else \
                (max(rx) < min(ry) or max(ry) < min(rx)):
            return True
    return False


def forward_reads(g: Graph) -> Graph:
    """Point reads of a written buffer past writes of the same pattern that they don't touch."""
    if not any(e.prim is P.setitem or e.prim is P.setitem_add for e in g.eqns):
        return g
    defs = {e.out: e for e in g.eqns}
    env: dict[Var, Atom] = {}
    eqns = []
    for e in g.eqns:
        ins = tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs)
        if e.prim is P.getitem and P.is_basic(e.params["idx"]):
            r = e.params["idx"]
            cur = ins[0]
            while isinstance(cur, Var) and cur in defs:
                w = defs[cur]
                widx = w.params.get("idx") if w.prim in (P.setitem, P.setitem_add) else None
                if widx is None or not P.is_basic(widx) or pattern_of(widx)[0] != pattern_of(r)[0]:
                    break
                if _disjoint(widx, r):
                    cur = w.inputs[0]
                    continue
                if widx == r and w.prim is P.setitem and w.inputs[1].aval == e.out.aval:
                    env[e.out] = w.inputs[1]  # reading back what was just written
                    cur = None
                break
            if cur is None:
                continue
            ins = (cur,) + ins[1:]
        eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return g.replace(eqns=tuple(eqns), outputs=outs)


def build_nodes(g: Graph) -> list[Node]:
    """Nodes in order of their first equation, with write chains and add chains collapsed.
    A chain continues through a version that nothing else reads, even when other work is
    interleaved (a loop body computes, then writes)."""
    n_uses = uses(g)
    nodes: list[Node] = []
    open_: dict[Var, Node] = {}  # the newest version of each chain -> its node
    chain_prims = (P.setitem, P.setitem_add, P.add)
    for e in g.eqns:
        if e.prim not in chain_prims:  # the common case, quickly
            nodes.append(Node("eqn", e.out, e.inputs, e, e.src))
            continue
        head = e.inputs[0] if e.inputs and isinstance(e.inputs[0], Var) else None
        cand = open_.get(head) or (open_.get(e.inputs[1]) if len(e.inputs) > 1 and
                                   isinstance(e.inputs[1], Var) else None)
        if cand is not None and cand.kind == "eqn" and e.prim is P.add:
            _promote(cand)  # a second add continues the first: now it is a chain
        if cand is not None and _extends_write(cand, e, n_uses):
            del open_[cand.out]
            _append_write(cand, e)
        elif cand is not None and _extends_sum(cand, e, n_uses):
            del open_[cand.out]
            _append_sum(cand, e)
        else:
            cand = _start(e)
            nodes.append(cand)
        if cand.kind in ("write", "sum") or cand.eqn.prim is P.add and _sum_start(cand.eqn):
            open_[cand.out] = cand
    out = []
    for n in nodes:  # a lone `a + b` or a single write stays an ordinary equation
        if n.kind == "sum" and len(n.operands) < 3 or n.kind == "write" and len(n.operands) < 3:
            out += [Node("eqn", e.out, list(e.inputs), e, e.src) for e in n.eqns]
        else:
            out.append(n)
    return out


def _start(e: Eqn) -> Node:
    if e.prim in (P.setitem, P.setitem_add) and P.is_basic(e.params["idx"]):
        pat, axes, vals = pattern_of(e.params["idx"])
        return Node("write", e.out, list(e.inputs), e, e.src,
                    (e.prim, pat, axes, [vals]), srcs=[e.src], eqns=[e])
    return Node("eqn", e.out, e.inputs, e, e.src)  # an add becomes a chain once continued


def _sum_start(e: Eqn) -> list | None:
    """The terms of `e` if it can start an add chain: both operands (of the result's shape), or
    the one beside a zero start value (sum() starts at 0; `acc = zeros(...)` too)."""
    for z, x in ((e.inputs[0], e.inputs[1]), (e.inputs[1], e.inputs[0])):
        if _is_zero(z) and x.aval == e.out.aval:
            return [x]
    if e.inputs[0].aval == e.inputs[1].aval == e.out.aval:
        return list(e.inputs)
    return None


def _promote(n: Node) -> None:
    terms = _sum_start(n.eqn)
    n.kind, n.operands, n.members = "sum", terms, len(terms)
    n.srcs, n.eqns = [n.src], [n.eqn]


def _is_zero(a: Atom) -> bool:
    return isinstance(a, Const) and a.value.size <= 1 << 16 and not a.value.any()


def _extends_write(n: Node | None, e: Eqn, n_uses: dict) -> bool:
    if n is None or n.kind != "write" or e.prim is not n.write[0] or e.inputs[0] is not n.out:
        return False
    if n_uses.get(n.out, 0) != 1 or not P.is_basic(e.params["idx"]):
        return False
    return pattern_of(e.params["idx"])[0] == n.write[1] and e.inputs[1].aval == n.operands[1].aval


def _append_write(n: Node, e: Eqn) -> None:
    n.operands.append(e.inputs[1])
    n.write[3].append(pattern_of(e.params["idx"])[2])
    n.out, n.eqn, n.members = e.out, e, n.members + 1
    n.srcs.append(e.src)
    n.eqns.append(e)


def _extends_sum(n: Node | None, e: Eqn, n_uses: dict) -> bool:
    if n is None or n.kind != "sum" or e.prim is not P.add or n_uses.get(n.out, 0) != 1:
        return False
    other = e.inputs[1] if e.inputs[0] is n.out else e.inputs[0] if e.inputs[1] is n.out else None
    return other is not None and other.aval == e.out.aval == n.out.aval


def _append_sum(n: Node, e: Eqn) -> None:
    n.operands.append(e.inputs[1] if e.inputs[0] is n.out else e.inputs[0])
    n.out, n.eqn, n.members = e.out, e, n.members + 1
    n.srcs.append(e.src)
    n.eqns.append(e)


def write_positions(n: Node) -> np.ndarray:
    """The integer index of each write of a chain, one row per write."""
    return np.asarray(n.write[3], dtype=np.int64).reshape(len(n.write[3]), len(n.write[2]))


def node_key(n: Node, source: Any) -> tuple:
    """Nodes with equal keys (at equal depth) batch together. `source(atom)` names the batch
    group an operand comes from, or None."""
    if n.kind == "write":
        return ("write", id(n))
    if n.kind == "sum":
        return ("sum", len(n.operands), n.out.aval, tuple(source(a) for a in n.operands[:1]))
    e = n.eqn
    avals = tuple([a.aval for a in e.inputs])
    if e.prim is P.getitem:
        idx = e.params["idx"]
        if not P.is_basic(idx):
            return ("eqn", e.prim, Params(e.params), avals, id(n))  # irregular reads stay apart
        base = e.inputs[0]
        return ("getitem", pattern_of(idx)[0], avals, source(base) or base)
    return ("eqn", e.prim, e.params, avals, tuple([source(a) for a in e.inputs]))


__all__ = [
    "Adv",
    "Node",
    "Sl",
    "build_nodes",
    "forward_reads",
    "node_key",
    "pattern_of",
    "write_positions",
]
