"""What batching tells `explain`: which source lines were merged into what, and which stayed
unmerged and why. A recurrence is claimed only where a dependence path joins the members.
Notes never list per-member details, so no line grows with a trip count."""
from __future__ import annotations

from collections import defaultdict, deque
from operator import attrgetter
from typing import Any

from ..ir import Eqn
from ..notes import Batched, Note, Sequential, Unbatched
from .nodes import SUM, WRITE, Plan

# A line whose operations ran as at most this many groups, one feeding the next, each wider
# than there are groups, applies the operation to its own result (`-log(sigmoid(-z))`, a
# loop-invariant factor then the per-iteration one): it ran as few operations as its
# dependences allow and is not listed as unmerged. A longer chain is a recurrence.
NESTED = 3


def _nested(groups: list[list[int]]) -> bool:
    return len(groups) <= 2 or (len(groups) <= NESTED
                                 and max(map(len, groups)) > len(groups))

_SRC = attrgetter("src")

# Nodes visited per split key when looking for a dependence path between its groups.
PATH_BUDGET = 20_000


class Notes:
    """Collects the batching notes of one pass."""

    def __init__(self, p: Plan):
        self.p = p
        self.items: list[Note] = []
        self.groups: dict[Any, list[list[int]]] = defaultdict(list)  # key -> agenda groups

    def _what(self, i: int) -> str:
        k = self.p.kind[i]
        return "sum" if k == SUM else "write" if k == WRITE else self.p.eqn[i].prim.name

    def _src(self, i: int) -> Any:
        e = self.p.eqn[i]
        return e.src if e is not None else None

    def group(self, members: list[int]) -> None:
        """An agenda group (one key, emitted at one time), split by source line: one key can
        hold operations of several lines (`h[i]` read on two lines), and a line is split only
        when its own operations ran as several groups."""
        p = self.p
        k = p.key[members[0]]
        if k is None:
            return
        eqn = p.eqn
        try:  # (the common case, quickly: one line, no join)
            srcs = list(map(_SRC, map(eqn.__getitem__, members)))
        except AttributeError:
            srcs = None
        if srcs is not None and srcs.count(srcs[0]) == len(srcs):
            self.groups[(k, srcs[0])].append(list(members))
            return
        by_src: dict[Any, list[int]] = {}
        for m in members:
            e = eqn[m]
            by_src.setdefault(e.src if e is not None else None, []).append(m)
        for src, ms in by_src.items():
            self.groups[(k, src)].append(ms)

    def batched(self, members: list[int], out: Any, made: Eqn | None) -> None:
        """Members merged into one operation `made` (or views: `made` None)."""
        p = self.p
        count = sum(map(p.members.__getitem__, members))
        if count > 1:
            self.items.append(Batched(self._src(members[0]), self._what(members[0]), count,
                                      _describe(made),
                                      None if out is None else tuple(out.shape)))

    def unbatched(self, members: list[int], why: str) -> None:
        """Members that stay one operation each: their batching rule refused."""
        self.items.append(Unbatched(self._src(members[0]), self._what(members[0]),
                                    len(members), why))

    def finish(self) -> tuple:
        out = list(self.items)
        flagged = {(n.src, n.what) for n in out if type(n) is Unbatched}
        singles: dict[tuple, int] = defaultdict(int)
        for key, groups in self.groups.items():
            i0 = groups[0][0]
            src, what = self._src(i0), self._what(i0)
            if src is None or (src, what) in flagged:
                continue
            if len(groups) == 1:
                k = self.p.key_of[key[0]]
                if len(groups[0]) == 1 and k[0] is not None:  # the same operation, other shapes
                    singles[(src, what, k[:-1], _ranks(k[-1]))] += 1
                continue
            n = sum(len(g) for g in groups)
            path = self._path(groups)
            if path is None:
                reason = (f"{n} `{what}` operations at {src} ran as {len(groups)} operations "
                          "(the trace is too large to say whether they depend on each other)")
            elif path and _nested(groups):
                continue  # as few operations as the dependences allow (the line applies
                # `what` to its own result, `-f(-x)`): each group is noted as batched
            elif path:
                chain = "a recurrence" if len(groups) > 2 else "one feeds the other"
                reason = (f"{n} `{what}` operations at {src} ran as {len(groups)} operations: "
                          f"each depends on the result of a previous one ({chain}), so they "
                          "run one after another")
            else:
                reason = (f"{n} `{what}` operations at {src} ran as {len(groups)} operations: "
                          "they do not depend on each other, but not all were ready at once "
                          "(some wait on other work)")
            out.append(Sequential(src, what, n, reason, len(groups), path))
        for (src, what, _, _), k in singles.items():
            if k > 1:
                out.append(Unbatched(src, what, k, f"{k} `{what}` operations at {src} differ "
                                                   "in operand shapes, so each runs alone"))
        return tuple(out)

    def _path(self, groups: list[list[int]]) -> bool | None:
        """Whether some member of a later group depends on a member of the first group (a
        backward search from the second group, bounded by PATH_BUDGET; None when spent)."""
        first = set(groups[0])
        lo = min(first)
        preds = self._preds()
        seen: set[int] = set()
        steps = 0
        for start in groups[1]:  # (one member at a time, breadth first, the budget counted in
            todo = deque([start])  # nodes expanded: a dependence shows near the first member,
            while todo:  # and 20,000 members or operands must not spend it before a step)
                steps += 1
                if steps > PATH_BUDGET:
                    return None
                j = todo.popleft()
                for q in preds[j]:
                    if q in first:
                        return True
                    if q >= lo and q not in seen:
                        seen.add(q)
                        todo.append(q)
        return False

    def _preds(self) -> list[list[int]]:
        if not hasattr(self, "_pred_lists"):
            preds: list[list[int]] = [[] for _ in self.p.kind]
            for u, ss in enumerate(self.p.succ):
                for s in ss:
                    preds[s].append(u)
            self._pred_lists = preds
        return self._pred_lists


def _ranks(avals: Any) -> tuple:
    """The operands' ranks: operations of one line that differ in rank (`-D` and `-sum(..)`
    on one line) are two expressions, not one operation at several shapes of a loop."""
    if not isinstance(avals, tuple):
        return ()
    return tuple(len(a.shape) if hasattr(a, "shape") else -1 for a in avals)


def _describe(e: Eqn | None) -> str:
    if e is None:
        return "?"
    ps = ", ".join(f"{k}={v}" for k, v in e.params.items() if k in ("spec", "axes", "axis"))
    return f"{e.prim.name}" + (f"[{ps}]" if ps else "") + f" -> {e.out.aval}"
