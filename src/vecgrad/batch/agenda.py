"""Scheduling the dependence graph for batching: DyNet's agenda, done statically.

A node is *ready* when every node it depends on has been emitted. Ready nodes of equal key are
isomorphic and independent, so they can run as one batched operation. The agenda repeatedly
picks a key and emits all its ready nodes as one group:

1. A key whose remaining nodes are all ready goes first: waiting cannot add members to it.
2. Otherwise the key of the ready node with the longest path below it (the critical path):
   that advances a recurrence, while work hanging off the recurrence (`total += sum(h**2)` at
   every step) waits until all its members are ready and then runs once, after it.

Join nodes (pure ordering points) are passed through as soon as they are ready. Each node is
pushed and popped once (plus heap entries per key readiness), so the cost is O(N log N).
"""
from __future__ import annotations

import heapq
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
    ready: list[list[int] | None] = [None] * nk
    pushed = [-1] * nk  # the greatest height pushed for each key since it last ran
    complete: list[int] = []
    heap: list[tuple[int, int, int]] = []

    push = heapq.heappush

    def release(todo: list[int]) -> None:
        """Emitted, the last first (a stack: each node's successors, joins passed through
        included, are released before the next node's): their successors lose a predecessor
        (make_ready inlined: this runs once per node)."""
        while todo:
            j = todo.pop()
            for s in succ[j]:
                c = npred[s] - 1
                npred[s] = c
                if c == 0 and not dead[s]:
                    if kind[s] == JOIN:
                        todo.append(s)
                        continue
                    k = keys[s]
                    lst = ready[k]
                    if lst is None:
                        lst = ready[k] = []
                    lst.append(s)
                    if len(lst) == remaining[k]:
                        complete.append(k)
                    hs = h[s]
                    if hs > pushed[k]:
                        pushed[k] = hs
                        push(heap, (-hs, s, k))

    def make_ready(i: int) -> None:
        k = keys[i]
        lst = ready[k]
        if lst is None:
            lst = ready[k] = []
        lst.append(i)
        if len(lst) == remaining[k]:
            complete.append(k)
        if h[i] > pushed[k]:
            pushed[k] = h[i]
            heapq.heappush(heap, (-h[i], i, k))

    for i in [i for i in range(n) if npred[i] == 0 and not dead[i]]:
        if kind[i] == JOIN:
            release([i])
        else:
            make_ready(i)
    while True:
        k = -1
        while complete:
            c = complete.pop()
            if ready[c]:
                k = c
                break
        while k < 0 and heap:
            _, i, c = heapq.heappop(heap)
            if ready[c]:
                k = c
        if k < 0:
            break
        members = ready[k]
        ready[k] = None
        pushed[k] = -1
        members.sort()
        remaining[k] -= len(members)
        yield members
        release(members[::-1])


__all__ = ["heights", "schedule"]
