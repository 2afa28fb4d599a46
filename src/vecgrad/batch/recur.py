"""Finding recurrences: the repeated step structure that batching left sequential.

After batching, what stays sequential is plain equations, one copy per loop iteration. This
module finds them and splits them into steps, in time linear in the graph:

1. Label every equation by what it computes (primitive, params, operand shapes, source line)
   and, one level up, by the labels of its operands' producers (or the identity of a graph
   input): two layers of one network differ there by their weights.
2. Labels repeated at least MIN_TRIPS - 1 times (the first iteration may differ) form a label
   graph (an edge where an instance of one reads an instance of the other); a recurrence is
   one of its strongly connected components.
3. Number the iterations. The k-th instance of a label (in graph order) belongs to iteration
   k + off[label]; the offsets make every label edge stay within an iteration or reach the
   previous one (a longest path over the label graph: each edge's typical rank difference
   is a constraint). A first or last iteration that differs (an initial value, dead code at
   the end) simply fails to match and stays as it was.
4. Each iteration gets a signature: for each member (in a fixed label order) and operand,
   whether it reads a member of its own iteration, of the previous one (a carry), or
   something from outside. Runs of equal signatures are the rolled loops.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from .. import primitives as P
from ..ir import Atom, Const, Graph, Var

_INPUTS = attrgetter("inputs")
MIN_TRIPS = 4  # fewer iterations than this stay unrolled (rolling would cost more than it saves)
_X = ("x",)


@dataclass
class Region:
    """A run of iterations of one recurrence: `steps[k][j]` is the index (in the graph) of
    member j of iteration k; `sig[j][p]` says what operand p of member j reads: ("g", i)
    member i of the same iteration, ("p", i) member i of the previous one, ("x",) anything
    else. `init[i]` is what the first iteration reads for ("p", i)."""

    steps: list[list[int]]
    sig: tuple
    init: dict[int, Atom] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return len(self.steps)


def _coarse(e: Any) -> tuple:
    """What an equation computes, positions of its index left out (the reads that feed one
    iteration each differ only there)."""
    ps = e.params
    if "idx" in ps:
        ps = tuple(("i" if isinstance(k, int) else (len(k), k.step) if isinstance(k, P.Sl)
                    else k) for k in ps["idx"])
    return (e.prim, ps, tuple([a.aval for a in e.inputs]), e.src)


def _const_label(a: Const) -> tuple:
    """A constant operand's label: a scalar by its type only, so steps that differ in a
    Python number (a time t * dt, a coefficient 1 / (t + 1)) are one step, rolled with the
    numbers as a per-step input; an array by its value."""
    return ("c", a.aval) if not a.aval.shape else ("c", a.key())


class _Labels:
    """Equation labels: what an equation computes, refined by its operands' labels (or
    which graph input or constant they are). An operand made by a read whose position
    varies (a label seen fewer than MIN_TRIPS times) counts by what it computes."""

    def __init__(self, g: Graph):
        self.g = g
        eqns = g.eqns
        self.pos = pos = {e.out: i for i, e in enumerate(eqns)}
        ids: dict[tuple, int] = {}
        full = []
        for e in eqns:  # (one and two operands unrolled: this runs once per equation)
            ins = e.inputs
            n = len(ins)
            av = (ins[0].aval, ins[1].aval) if n == 2 else (ins[0].aval,) if n == 1 else \
                tuple([a.aval for a in ins])
            full.append(ids.setdefault((e.prim, e.params, av, e.src), len(ids)))
        cnt = Counter(full)
        M = MIN_TRIPS - 1
        # (how many instances of each label read a value: a layer's weights are read by
        # every step of that layer, a per-step value by its own step; counted only for the
        # values read M times or more; constants are counted too, never looked up)
        n_uses = Counter(chain.from_iterable(map(_INPUTS, eqns)))
        by = Counter((a, f) for e, f in zip(g.eqns, full) for a in e.inputs
                     if a.__class__ is Var and n_uses[a] >= M)
        coarse: dict[tuple, int] = {}
        # (reads of one array at positions that vary, `logB[:, o]` for o in a list: a read
        # repeated in the list is one value, read by several steps, yet per-step data, not
        # an invariant: counted by what it computes, as a read made once per step is)
        # (and wherever on the user's lines it was first read: the first step's read of
        # logB[:, obs[0]] may be the line before the loop's)
        reads = Counter(_coarse(e)[:3] for e in g.eqns if "idx" in e.params)
        # (a value whose own kind repeats at least as often as one label reads it is per-step
        # data that one step reads several times, a norm divided into each component or a
        # distance read by both of a nested jvp's tangents: not an invariant; a weight is
        # made once, or once per layer, and read by every step)
        self.prods: list[tuple[int, ...]] = []  # per equation: its producers (-1: fixed)
        self.fixed: list[tuple] = []
        many = [cnt[f] >= M for f in full]  # (per equation: its label seen M times or more)
        co3: dict[int, tuple] = {}  # (a read's _coarse(...)[:3], once per read)
        for e, fi in zip(eqns, full):  # an operand read by many instances of e's label
            ps, fx = [], []  # (an invariant) counts by which value it is
            for a in e.inputs:
                if a.__class__ is not Var:
                    ps.append(-1)
                    fx.append(_const_label(a))
                    continue
                d = pos.get(a)
                if d is None:
                    ps.append(-1)
                    fx.append(("in", a))
                    continue
                if many[d] and n_uses[a] < M:  # (the common case: a step's own value)
                    ps.append(d)
                    fx.append(None)
                    continue
                read = None
                if not many[d] and "idx" in eqns[d].params:
                    read = co3.get(d)
                    if read is None:
                        read = co3[d] = _coarse(eqns[d])[:3]
                varying = read is not None and reads[read] >= M
                shared = n_uses[a] >= M and by[a, fi] >= M and not varying and \
                    cnt[full[d]] < by[a, fi]
                if many[d] and not shared:
                    ps.append(d)
                    fx.append(None)
                elif varying:
                    ps.append(-1)
                    fx.append(("r", coarse.setdefault(read, len(coarse))))
                else:
                    ps.append(-1)
                    fx.append(("in", a) if shared else
                              ("k", coarse.setdefault(_coarse(eqns[d]), len(coarse))))
            self.prods.append(tuple(ps))
            self.fixed.append(tuple(fx))
        self.lab = full
        self.ids: dict[tuple, int] = {}
        # (a label seen fewer than M times stays unique when refined: it is left as it is)
        self.refine([i for i, m in enumerate(many) if m])

    def refine(self, eqns: Any, values: bool = False) -> None:
        """One more level of operand labels for these equations; with `values`, scalar
        constants count by their value (`0.9 * a` and `0.1 * a` in one step)."""
        lab, ids, prods, fixed = self.lab, self.ids, self.prods, self.fixed
        new = []
        top = 1_000_000_000
        for i in eqns:  # (one and two operands unrolled: this runs over whole components)
            fx, ps = fixed[i], prods[i]
            if values:
                fx = tuple(("v", a.key()) if a.__class__ is Const else f
                           for a, f in zip(self.g.eqns[i].inputs, fx))
            n = len(ps)
            if n == 2:
                d0, d1 = ps
                ops = (fx[0] if d0 < 0 else lab[d0], fx[1] if d1 < 0 else lab[d1])
            elif n == 1:
                d0 = ps[0]
                ops = (fx[0] if d0 < 0 else lab[d0],)
            else:
                ops = tuple([f if d < 0 else lab[d] for d, f in zip(ps, fx)])
            new.append(ids.setdefault((lab[i], ops), len(ids) + top))
        for i, v in zip(eqns, new):  # (every new label from the old ones: then set)
            lab[i] = v


def find_regions(g: Graph, rounds: int = 6) -> list[Region]:
    """The recurrences of g that can be rolled, as runs of matching iterations. Labels that
    stand for two things in one iteration (two identical chains side by side) are refined
    by one more level of operands, up to `rounds` times, where no run was found."""
    labels = _Labels(g)
    out: list[Region] = []
    taken: set[int] = set()
    todo = [(list(range(len(g.eqns))), 1)]
    while todo:
        eqns, r = todo.pop()
        for S, insts in _components(g, labels, eqns):
            twice, med = _twice(insts)
            if twice and r < rounds:  # split them until none is left (or rounds run out)
                r += _split(labels, twice, med, rounds - r)
                todo.append(([i for v in insts.values() for i in v], r))
                continue
            found, numbered = _regions_of(g, S, insts, labels)
            covered = sum(len(x.steps) * len(x.sig) for x in found)
            total = sum(len(v) for v in insts.values())
            if covered * 2 < total and (numbered or _uniform(insts)):
                found, covered = _periodic(g, insts, labels, found, covered)
            if covered * 2 >= total or r >= rounds:
                for x in sorted(found, key=lambda x: -x.length):  # (regions never share an
                    # equation: where two runs overlap, through the earlier iterations
                    # `_first` adds, the longer one is kept)
                    mine = {i for st in x.steps for i in st}
                    if not mine & taken:
                        taken |= mine
                        out.append(x)
            else:  # one more level of operands for every label of the component
                labels.refine([i for v in insts.values() for i in v])
                todo.append(([i for v in insts.values() for i in v], r + 1))
    return out


def _periodic(g: Graph, insts: dict[int, list[int]], labels: _Labels, found: list[Region],
              covered: int) -> tuple[list[Region], int]:
    """Regions when every label stands for p members of each iteration, with nothing in
    their operands to tell the copies apart: a step that calls one function twice, `y + h *
    f(y + h / 2 * f(y))` (no refinement separates the calls, and numbered by instance the
    second call reads two iterations back). Each label's instances are dealt round-robin
    into p labels (an instance's phase along its label is which copy it is, whatever
    iteration the label's first instance belongs to); kept where it covers more, else the
    labels are put back. `_runs` checks that every rolled iteration computes the same step."""
    lab = labels.lab
    for p in range(2, 5):
        # (labels seen too few times to hold p copies per iteration, the first
        # iteration's own, are left out: their instances are read as from outside)
        many = {L: v for L, v in insts.items() if len(v) >= p * (MIN_TRIPS - 1)}
        if len(many) < 2:
            break
        saved = {i: lab[i] for v in many.values() for i in v}
        split: dict[int, list[int]] = {}
        for L, v in many.items():
            for ph in range(p):
                ii = v[ph::p]
                # (a key of its own: a split tried again, after one put back, makes new
                # labels, never one already handed out)
                new = len(labels.ids) + 2_000_000_000
                labels.ids[("p", new)] = new
                for i in ii:
                    lab[i] = new
                split[new] = ii
        got = _regions_of(g, set(split), split, labels)[0]
        n = sum(len(x.steps) * len(x.sig) for x in got)
        if n > covered:
            return got, n
        for i, L in saved.items():
            lab[i] = L
    return found, covered


def _uniform(insts: dict[int, list[int]]) -> bool:
    """Every label seen equally often, but for a first iteration's few (a step that calls one
    function p times: no numbering need fit the undealt labels, whose instances alternate
    between the copies and so between rank differences)."""
    counts = [len(v) for v in insts.values()]
    return max(counts) - min(counts) <= 4 * MIN_TRIPS


def _twice(insts: dict[int, list[int]]) -> tuple[list[list[int]], int]:
    """The instances of labels seen half again as often as the typical one (labels that
    stand for two things in each iteration), and the typical count."""
    counts = sorted(len(v) for v in insts.values())
    med = counts[len(counts) // 2]
    return [v for v in insts.values() if len(v) * 2 > med * 3], med


def _split(labels: _Labels, twice: list[list[int]], med: int, rounds: int) -> int:
    """Refine the labels of `twice`'s instances, again while some are still seen half again
    as often as `med`; returns the rounds spent."""
    n = 0
    stuck = False
    while twice and n < rounds:
        n += 1
        sub = [i for v in twice for i in v]
        # (when a round splits nothing, the copies differ only in a constant: `0.9 * a`
        # and `0.1 * a` on one line; a number that varies with the step, 1 / (t + 1), is
        # in one copy per step, never seen twice in a step)
        labels.refine(sub, values=stuck)
        by: dict[int, list[int]] = defaultdict(list)
        for i in sub:
            by[labels.lab[i]].append(i)
        left = [v for v in by.values() if len(v) * 2 > med * 3]
        stuck = len(left) == len(twice) and not stuck
        twice = left
    return n


def _components(g: Graph, labels: _Labels, eqns: list[int]) -> list[tuple[set, dict]]:
    """The recurrent components of the label graph over these equations."""
    lab = labels.lab
    insts: dict[int, list[int]] = defaultdict(list)
    for i in eqns:
        insts[lab[i]].append(i)
    rep = {L for L, ii in insts.items() if len(ii) >= MIN_TRIPS - 1}
    succ: dict[int, set[int]] = defaultdict(set)
    prods = labels.prods
    for L in rep:
        for i in insts[L]:
            for d in prods[i]:
                if d >= 0 and lab[d] in rep:
                    succ[lab[d]].add(L)
    out = []
    for comp in _sccs(sorted(rep), succ):
        if len(comp) > 1 or comp[0] in succ.get(comp[0], ()):
            out.append((set(comp), {L: insts[L] for L in comp}))
    return out


def _sccs(nodes: list[int], succ: dict[int, set[int]]) -> list[list[int]]:
    """Strongly connected components (Tarjan's algorithm, iterative)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _regions_of(g: Graph, S: set[int], insts: dict[int, list[int]],
                labels: _Labels) -> tuple[list[Region], bool]:
    """The regions of one component, and whether some numbering of its iterations fit
    (where one did and few iterations matched, a label may stand for several members of
    each: `_periodic`)."""
    found = _regions_by_rank(g, S, insts, labels)
    fewest = min(len(v) for v in insts.values())
    if found or fewest < MIN_TRIPS - 1 or all(len(v) == fewest for v in insts.values()):
        return found or [], found is not None
    # A first iteration some of whose members took the loop's labels and some not (its
    # `x[0]` reads the input, its `x * tanh(x[0])` looks like the others'): the extra
    # first instances shift the ranks along the cycle, so no numbering fits. Count from
    # the end instead: each label's last `fewest` instances (`_first` adds the earlier
    # iteration back where it matches).
    last = _regions_by_rank(g, S, {L: v[len(v) - fewest:] for L, v in insts.items()}, labels)
    return last or [], found is not None or last is not None


def _regions_by_rank(g: Graph, S: set[int], insts: dict[int, list[int]],
                     labels: _Labels) -> list[Region] | None:
    """The longest runs over the ways to number the iterations; None where no numbering
    fits the label graph's edges."""
    lab, prods = labels.lab, labels.prods
    rank = {i: k for L in S for k, i in enumerate(insts[L])}
    deltas: dict[tuple, Counter] = defaultdict(Counter)
    for L in S:  # each edge's typical rank difference, from a sample of its instances
        ii = insts[L]
        for i in ii[::max(1, len(ii) // 48)]:
            for p, d in enumerate(prods[i]):
                if d >= 0 and lab[d] in S and d in rank:  # (not a trimmed first instance)
                    deltas[(lab[d], L, p)][rank[i] - rank[d]] += 1
    edges = [(M, L, c.most_common(1)[0][0]) for (M, L, _), c in deltas.items()]
    off = _offsets(S, edges)
    if off is None:
        return None
    best: list[Region] = []
    for rot in _rotations(S, insts, rank, edges, off):
        found = _runs_for(g, S, insts, rank, labels, rot)
        if sum(r.length for r in found) > sum(r.length for r in best):
            best = found
    return best


def _rotations(S: set[int], insts: dict[int, list[int]], rank: dict[int, int],
               edges: list[tuple[int, int, int]], off: dict[int, int]) -> list[dict]:
    """Ways to cut the recurrence into iterations: `off`, and the rotations that absorb the
    partial iteration before the first whole one or after the last (a member seen there
    starts, or ends, each iteration), where the edges allow them."""
    out = [off]
    groups, _, full = _group(S, insts, rank, off)
    if not full:
        return out
    for k, d in ((full[0] - 1, 1), (full[-1] + 1, -1)):
        part = set(groups.get(k, ()))
        if part:
            o = {L: off[L] + d * (L in part) for L in S}
            if all(0 <= o[L] - o[M] + c <= 1 for M, L, c in edges):
                out.append(o)
    return out


def _runs_for(g: Graph, S: set[int], insts: dict[int, list[int]], rank: dict[int, int],
              labels: _Labels, off: dict[int, int]) -> list[Region]:
    """The rolled runs when iterations are numbered by `off`."""
    lab, pos, prods = labels.lab, labels.pos, labels.prods
    groups, dup, full = _group(S, insts, rank, off)
    if len(full) < MIN_TRIPS - 1:
        return []
    it = {i: rank[i] + off[lab[i]] for L in S for i in insts[L]}
    mid = groups[full[len(full) // 2]]
    order = sorted(S, key=lambda L: mid[L])  # a topological order of one iteration
    idx = {L: j for j, L in enumerate(order)}

    def sig(k: int) -> tuple | None:
        m = groups[k]
        if len(m) != len(S) or k in dup:
            return None
        out = []
        for L in order:
            codes = []
            for d in prods[m[L]]:
                if d < 0 or lab[d] not in S or d not in it:
                    codes.append(_X)
                elif it[d] == k:
                    codes.append(("g", idx[lab[d]]))
                elif it[d] == k - 1:
                    codes.append(("p", idx[lab[d]]))
                else:
                    return None  # reads further back than the previous iteration
            out.append(tuple(codes))
        return tuple(out)
    return _runs(g, groups, order, full, sig, pos)


def _group(S: set[int], insts: dict[int, list[int]], rank: dict[int, int],
           off: dict[int, int]) -> tuple[dict[int, dict[int, int]], set[int], list[int]]:
    """Iterations (number -> label -> equation), those holding a label twice, and the
    numbers of the whole ones."""
    groups: dict[int, dict[int, int]] = defaultdict(dict)
    dup: set[int] = set()
    for L in S:
        for i in insts[L]:
            k = rank[i] + off[L]
            if L in groups[k]:
                dup.add(k)
            groups[k][L] = i
    full = sorted(k for k, m in groups.items() if len(m) == len(S) and k not in dup)
    return groups, dup, full


def _offsets(S: set[int], edges: list[tuple[int, int, int]]) -> dict[int, int] | None:
    """Per-label offsets with every edge's iteration step (off[L] - off[M] + c) in {0, 1}:
    the least offsets satisfying the lower bounds (a longest path), then a check."""
    off = dict.fromkeys(S, 0)
    for _ in range(len(S) + 1):
        changed = False
        for M, L, c in edges:
            if off[M] - c > off[L]:
                off[L] = off[M] - c
                changed = True
        if not changed:
            break
    else:
        return None
    if any(not 0 <= off[L] - off[M] + c <= 1 for M, L, c in edges):
        return None
    return off


def _runs(g: Graph, groups: dict[int, dict[int, int]], order: list[int], full: list[int],
          sig: Any, pos: dict[Var, int]) -> list[Region]:
    sigs = {k: sig(k) for k in range(full[0] - 1, full[-1] + 1) if k in groups}
    out = []
    k = full[0]
    while k <= full[-1]:
        s = sigs.get(k)
        if s is None or not any(c[0] == "p" for codes in s for c in codes):
            k += 1
            continue
        end = k
        while sigs.get(end + 1) == s:
            end += 1
        steps = [[groups[j][L] for L in order] for j in range(k, end + 1)]
        init = step_inits(g, steps[0], s)
        for _ in range(3):  # earlier iterations that read their initial values differently
            first = _first(g, steps[0], s, pos)
            if first is None:
                break
            steps.insert(0, first[0])
            init = first[1]
        if init is not None and len(steps) >= MIN_TRIPS:
            out.append(Region(steps, s, init))
        k = end + 1
    return out


def _first(g: Graph, step: list[int], s: tuple, pos: dict[Var, int]
           ) -> tuple[list[int], dict[int, Atom]] | None:
    """The iteration before `step`, if it computes the same step from other carried-in
    values (say an initial state that is an input or a constant, where later iterations
    read the previous one; its equations then carry other labels). It is found from
    `step`'s reads of it and its own reads, member by member, latest first."""
    m: dict[int, int] = {}

    def put(j: int, a: Atom) -> bool:
        d = pos.get(a) if isinstance(a, Var) else None
        return d is not None and m.setdefault(j, d) == d
    for j, i in enumerate(step):
        for a, code in zip(g.eqns[i].inputs, s[j]):
            if code[0] == "p" and not put(code[1], a):
                return None
    for j in reversed(range(len(s))):
        if j not in m:
            return None  # a member nothing later in the iteration reads
        for a, code in zip(g.eqns[m[j]].inputs, s[j]):
            if code[0] == "g" and not put(code[1], a):
                return None
    members = {g.eqns[d].out for d in m.values()}
    for j, i in enumerate(step):
        e, f = g.eqns[i], g.eqns[m[j]]
        if (e.prim, e.params, e.src) != (f.prim, f.params, f.src) or \
                [a.aval for a in e.inputs] != [a.aval for a in f.inputs]:
            return None
    init = step_inits(g, [m[j] for j in range(len(s))], s)
    if init is None or any(isinstance(a, Var) and a in members for a in init.values()):
        return None
    for j in range(len(s)):  # what it reads from outside is not its own work
        for a, code in zip(g.eqns[m[j]].inputs, s[j]):
            if code[0] == "x" and isinstance(a, Var) and a in members:
                return None
    return [m[j] for j in range(len(s))], init


def step_inits(g: Graph, step: list[int], s: tuple) -> dict | None:
    """What an iteration reads where the signature reads the previous iteration (one value
    per carried member)."""
    init: dict[int, Atom] = {}
    for j, i in enumerate(step):
        for a, code in zip(g.eqns[i].inputs, s[j]):
            if code[0] == "p" and init.setdefault(code[1], a) is not a:
                return None
    return init
