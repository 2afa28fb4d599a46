"""Scheduling the dependence graph for batching: DyNet's agenda, done statically.

A node is *ready* when every node it depends on has been emitted. Ready nodes of equal key are
isomorphic and independent, so they can run as one batched operation. The agenda repeatedly
picks a key and emits all its ready nodes as one group:

1. A key whose remaining nodes are all ready goes first: waiting cannot add members to it.
2. Otherwise the key of the ready node with the longest path below it (the critical path):
   that advances a recurrence, while work hanging off the recurrence (`total += sum(h**2)` at
   every step) waits until all its members are ready and then runs once, after it.
   Such work can have the recurrence's own key (`w = w * b; loss += w * e`: both multiply two
   scalars). A ready member whose height is at most the least height of the key's members
   not yet ready cannot lead to any of them (heights fall strictly along every path), so it
   is *held* rather than merged into the recurrence's step (which would turn each step into
   a product with a stack of two and hide the chain from `scans`); held members run with
   the key's other members once all are ready. A key starts to hold only while HOLD_MIN or
   more of its members are not ready: the last steps of a recurrence run as written (a step
   can hold several members of one key, `0.2 * c`, `0.3 * c`, `0.5 * c` of three lags, some
   of which lead nowhere at the end; held, they would make the last steps unlike the rest).

Join nodes (pure ordering points) are passed through as soon as they are ready. Each node is
pushed and popped once (plus heap entries per key readiness), so the cost is O(N log N).
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Iterator

from .nodes import JOIN, Plan


def heights(p: Plan) -> list[int]:
    """The longest path from each node to a sink (edges go forward in program order)."""
    n = len(p.kind)
    h = [0] * n
    succ = p.succ
    for i in range(n - 1, -1, -1):
        best = 0
        for s in succ[i]:
            if h[s] >= best:
                best = h[s] + 1
        h[i] = best
    return h


HOLD_MIN = 8  # a key starts to hold while it has this many members not yet ready


class _Lows:
    """Per key, the least height of its members not yet ready: a heap of (height, node) per key,
    popped lazily past members that became ready (each node is popped at most once). The heaps
    are made at the first question: a graph whose keys all run complete (independent
    iterations) never asks, and skips a tuple and a heap entry per node."""

    def __init__(self, p: Plan, h: list[int], nk: int):
        self.p, self.h, self.nk = p, h, nk
        self.heaps: list[list[tuple[int, int]]] | None = None
        self.is_ready = [False] * len(p.kind)

    def _make(self) -> list[list[tuple[int, int]]]:
        p, h = self.p, self.h
        heaps: list[list[tuple[int, int]]] = [[] for _ in range(self.nk)]
        for i, k in enumerate(p.key):
            if not p.dead[i] and p.kind[i] != JOIN:
                heaps[k].append((h[i], i))
        for q in heaps:
            heapq.heapify(q)
        self.heaps = heaps
        return heaps

    def least(self, k: int) -> float:
        heaps = self.heaps if self.heaps is not None else self._make()
        q, is_ready = heaps[k], self.is_ready
        while q and is_ready[q[0][1]]:
            heapq.heappop(q)
        return q[0][0] if q else math.inf


def schedule(p: Plan) -> Iterator[list[int]]:
    """Groups of node ids, in an order that respects every dependence (see module doc)."""
    n = len(p.kind)
    kind, keys, dead, succ = p.kind, p.key, p.dead, p.succ
    npred = list(p.npred)
    h = heights(p)
    nk = len(p.key_of)
    remaining = [0] * nk
    for i in range(n):
        if not dead[i] and kind[i] != JOIN:
            remaining[keys[i]] += 1
    lows = _Lows(p, h, nk)
    is_ready = lows.is_ready
    ready: list[list[int] | None] = [None] * nk
    held: list[list[int]] = [[] for _ in range(nk)]  # ready, waiting for the whole key
    nready = [0] * nk  # ready members not yet emitted, held ones included
    pushed = [-1] * nk  # the greatest height pushed for each key since it last ran
    complete: list[int] = []
    holding: list[int] = []  # keys that hold members
    heap: list[tuple[int, int, int]] = []

    push = heapq.heappush

    def release(todo: list[list[int]]) -> None:
        """Emitted, the last first: `todo` holds their successor lists (a stack: each node's
        successors, joins passed through included, are released before the next node's);
        their successors lose a predecessor, and those left with none are ready."""
        while todo:
            for s in todo.pop():
                c = npred[s] - 1
                npred[s] = c
                if c or dead[s]:
                    continue
                if kind[s] == JOIN:
                    todo.append(succ[s])
                    continue
                k = keys[s]  # (ready: once per node, so inline)
                is_ready[s] = True
                lst = ready[k]
                if lst is None:
                    ready[k] = [s]
                else:
                    lst.append(s)
                c = nready[k] = nready[k] + 1
                if c == remaining[k]:
                    complete.append(k)
                hs = h[s]
                if hs > pushed[k]:
                    pushed[k] = hs
                    push(heap, (-hs, s, k))

    def pick() -> tuple[int, list[int]]:
        """The next key to run and its members to run now (-1 when none is left)."""
        while complete:
            c = complete.pop()
            if nready[c] and nready[c] == remaining[c]:
                members = (ready[c] or []) + held[c]
                held[c] = []
                return c, members
        while heap:
            c = heapq.heappop(heap)[2]
            if not ready[c]:
                continue
            # (a hold starts only while HOLD_MIN members are not ready: at the end of a
            # key's members it gains no group worth the wait, and would make a recurrence's
            # last steps unlike the rest, which scans read as steps; once started it goes on)
            hold = held[c] or remaining[c] - nready[c] >= HOLD_MIN
            low = lows.least(c) if hold else -1
            run = [j for j in ready[c] if h[j] > low]
            rest = [j for j in ready[c] if h[j] <= low]
            if rest:
                if not held[c]:
                    holding.append(c)
                held[c] += rest
            if run:
                return c, run
            ready[c] = None
            pushed[c] = -1
        while holding:  # nothing else can run (a safeguard: heights make this unreachable)
            c = holding.pop()
            if held[c]:
                members = held[c]
                held[c] = []
                return c, members
        return -1, []

    for i in [i for i in range(n) if npred[i] == 0 and not dead[i]]:
        npred[i] = 1  # (a root: released by no node, in order, its joins passed through)
        release([[i]])
    while True:
        k, members = pick()
        if k < 0:
            break
        ready[k] = None
        pushed[k] = -1
        members.sort()
        remaining[k] -= len(members)
        nready[k] -= len(members)
        if held[k] and nready[k] == remaining[k]:
            complete.append(k)
        yield members
        release([succ[j] for j in reversed(members)])


__all__ = ["heights", "schedule"]
