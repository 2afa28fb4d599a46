"""The rewrite engine. A rule is data: the primitive it matches, a function giving the
replacement, and a one-line algebra comment. A replacement is None (no match), an existing
atom, or a new equation `(prim, inputs, params)`; a rule may also emit helper equations
through `ctx.emit`. Every new equation is itself rewritten before it is kept, so one forward
sweep reaches a fixpoint for rules that only look backwards (at their operands' definitions).

A rule that grows a value link by link along a chain (joining one more piece per link) would
rebuild the whole join at every link: quadratic. Such a rule may instead keep a link as it is
and `defer` its rewritten form while the link's only reader is the chain's next link; the
next link's rule `take`s it and extends it. The deferred form is built (`settle`) as soon as
anything else reads the value, so the result is the one the eager rewrite would give.

Rules are written to make a graph cheaper, but nothing forces two of them to agree on which
form is cheaper: a rule that moves a scalar out of a product and one that moves small factors
in can undo each other. The engine guards against such cycles by forms, not by trusting each
rule's orientation: an equation records each form it takes (its key: primitive, parameters,
inputs, the helpers deduplicated, so a repeated form has the same key); a rewrite back to a
form it took, or to a form an enclosing equation is being rewritten from (a helper that
re-creates its emitter), ends the rewrite at the current form, which is as correct as every
form in the cycle. A fuel bound (rewrites per equation, nesting of helpers) stops a chain of
ever-new forms. In strict mode (tests: VECGRAD_TYPECHECK=1) both raise RewriteCycleError
naming the rules, so a cyclic rule set is a failing test, never a hang.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import primitives as P
from ..errors import RewriteCycleError
from ..ir import Atom, Const, Eqn, Graph, Params, Src, Var, dce, uses


@dataclass(frozen=True)
class Rule:
    """A rewrite as data: the primitive it matches, the function giving the replacement
    (or None), and a one-line algebra comment."""

    prim: P.Primitive
    rewrite: Callable[[Eqn, Ctx], Any]
    algebra: str


class Ctx:
    """What a rule sees: the definitions so far, and a way to add equations. `memo` is a
    rule's own record of what it found about an equation kept earlier (keyed by the rule's
    choice), so that a rule that follows a chain of definitions extends what it knew of the
    chain's head instead of walking it again: one sweep stays linear in the graph."""

    # Rewrites of one equation, and helpers nested in helpers, past which a chain of rewrites
    # is taken for a cycle through ever-new forms (real chains take a few).
    FUEL = 64
    DEPTH = 48

    def __init__(self, rules: dict[P.Primitive, list[Rule]], n_uses: dict[Var, int],
                 strict: bool = False):
        self.rules = rules
        self.strict = strict
        # the forms taken by the equations being rewritten (a list: usually empty or short,
        # where a set would hash every equation's key twice more)
        self.active: list[tuple] = []
        self.trail: list[Any] = []  # the rule each of them is trying (what a cycle names),
        self.applied: list[str] = []  # and the rules that rewrote them so far
        self._uses = n_uses
        self.defs: dict[Var, Eqn] = {}
        self.eqns: list[Eqn] = []
        self.env: dict[Var, Atom] = {}
        self.memo: dict[Any, Any] = {}
        self.readers: dict[Var, Eqn] = {}  # the input graph's equation reading a var (the last)
        self.all_readers: dict[Var, list[Eqn]] = {}  # (all of them, in order)
        self.pending: dict[Var, tuple[Eqn, Any, Callable[[], Atom]]] = {}
        self.kept: dict[tuple, Var] = {}  # (prim, params, inputs) of the equations kept
        self.input: Graph | None = None  # the graph being rewritten (a rule looking ahead)

    def reader(self, v: Var) -> Eqn | None:
        """The input graph's equation that reads `v`, if `v` has one read in all."""
        return self.readers.get(v) if self._uses.get(v) == 1 else None

    def defer(self, v: Var, reader: Eqn, payload: Any, build: Callable[[], Atom]) -> None:
        """`v` is kept as it is for `reader`, whose rules may `take` `payload` (what a rule
        knows of v's better form); any other reader of v gets the atom `build()` makes."""
        self.pending[v] = (reader, payload, build)

    def deferred(self, v: Any) -> Any:
        """The payload deferred for `v` (None: none)."""
        p = self.pending.get(v) if isinstance(v, Var) else None
        return p[1] if p is not None else None

    def take(self, v: Any) -> None:
        """A rule has used v's deferred form (nobody needs it built)."""
        if isinstance(v, Var):
            self.pending.pop(v, None)

    def build(self, v: Var) -> Atom:
        """Build v's deferred form now; later reads of v read it."""
        self.env[v] = self.pending.pop(v)[2]()
        return self.env[v]

    def settle(self, ins: tuple, reader: Eqn | None) -> tuple:
        """`ins` with every deferred value built, but those deferred for `reader`."""
        return tuple([self.build(a) if isinstance(a, Var) and a in self.pending and
                      self.pending[a][0] is not reader else a for a in ins])

    def n_uses(self, v: Var) -> int:
        """Reads of `v` in the input graph (values made while rewriting count as one)."""
        return self._uses.get(v, 1)

    def reads(self, v: Var) -> int:
        """Reads of `v` in the input graph; 0 for a value made while rewriting (which may
        stand for an input-graph value read several times)."""
        return self._uses.get(v, 0)

    def stands_for(self, new: Atom, old: Var) -> None:
        """A value made while rewriting stands for `old` (old = f(new) for a rewrite that
        moves f outward): it is read as often as `old` is."""
        if isinstance(new, Var) and new not in self._uses:
            self._uses[new] = self.n_uses(old)

    def dropped_use(self, v: Var) -> None:
        """A rule replaced two reads of `v` by one (x + x = 2 * x)."""
        if v in self._uses:
            self._uses[v] -= 1

    def added_uses(self, v: Any, n: int) -> None:
        """A rule made n more reads of input-graph value `v` (one view per window offset), so
        rules that narrow a value read once (narrow.py) leave it whole."""
        if isinstance(v, Var) and v in self._uses:
            self._uses[v] += n

    def def_of(self, a: Atom, prim: P.Primitive | None = None) -> Eqn | None:
        e = self.defs.get(a) if isinstance(a, Var) else None
        return e if e is not None and (prim is None or e.prim is prim) else None

    def kept_as(self, prim: P.Primitive, ins: tuple, params: dict) -> Var | None:
        """The value of an equal equation kept so far, if there is one."""
        return self.kept.get(_key(prim, Params(params), tuple(ins)))

    def emit(self, prim: P.Primitive, ins: tuple, params: dict, src: Src | None) -> Atom:
        aval = prim.shape_rule(*[a.aval for a in ins], **params)
        return self.add(Eqn(prim, tuple(ins), Params(params), Var(aval), src))

    def add(self, e: Eqn) -> Atom:
        """Rewrite `e` to a fixpoint and keep it; returns the atom that now holds its value.
        A rewrite back to a form taken before (by `e`, or by an equation whose helper `e`
        is) keeps the current form: see the module's note on cycles."""
        key = _key(e.prim, e.params, e.inputs)
        active, trail = self.active, self.trail
        if active and key in active:  # (rules on e would run as they run on the emitter)
            self._cycle(e, key, "a helper re-creates the form its emitter is rewritten from")
            return self._keep(e, key)
        d = len(trail)
        if d >= self.DEPTH:
            self._cycle(e, key, f"helpers nested {self.DEPTH} deep")
            return self._keep(e, key)
        n_active = len(active)
        active.append(key)
        trail.append(None)
        applied = self.applied
        n_applied = len(applied)
        rules = self.rules.get(e.prim, ())
        try:
            for _ in range(self.FUEL):
                r = None
                for rule in rules:
                    trail[d] = rule
                    r = rule.rewrite(e, self)
                    if r is not None:
                        break
                if r is None:
                    return self._keep(e, key)
                if not isinstance(r, tuple):
                    return r
                prim, ins, params = r
                params = Params(params)
                ins = tuple(ins)
                nkey = _key(prim, params, ins)
                applied.append(rule.algebra)
                if nkey in active:
                    self._cycle(e, nkey, f"'{rule.algebra}' re-creates an earlier form")
                    return self._keep(e, key)
                active.append(nkey)
                if prim is not e.prim:
                    rules = self.rules.get(prim, ())
                e, key = Eqn(prim, ins, params, e.out, e.src), nkey
            self._cycle(e, key, f"{self.FUEL} rewrites of one equation")
            return self._keep(e, key)
        finally:
            del trail[d:], applied[n_applied:], active[n_active:]

    def _keep(self, e: Eqn, key: tuple) -> Atom:
        """Keep `e` as it is (an equal equation kept before is that one: a rule's helper
        equal to one kept before, a row sum a gradient already takes, is shared, as CSE
        would)."""
        same = self.kept.get(key)
        if same is not None and same.aval == e.out.aval:
            return same
        self.kept[key] = e.out
        self.defs[e.out] = e
        self.eqns.append(e)
        return e.out

    def _cycle(self, e: Eqn, key: tuple, why: str) -> None:
        if self.strict:
            raise RewriteCycleError(
                f"rewrite rules cycle on {e.prim.name} ({why}); rules that rewrote the "
                f"equations on the way: {_runs(self.applied)}; rules emitting the helpers: "
                f"{_runs([r.algebra for r in self.trail])}. Orient one of them by a measure "
                f"that decreases.")


def _runs(rules: list[str]) -> str:
    """'a' -> 'b' (x3) -> ...: rule names, repeats counted."""
    runs: list[list] = []
    for a in rules:
        if runs and runs[-1][0] == a:
            runs[-1][1] += 1
        else:
            runs.append([a, 1])
    return " -> ".join(f"'{a}'" + (f" (x{n})" if n > 1 else "") for a, n in runs) or "none"


def _key(prim: P.Primitive, params: Params, inputs: tuple) -> tuple:
    """What makes two equations compute the same value (constants by contents, as in CSE)."""
    return (prim, params, tuple([a.key() if a.__class__ is Const else a for a in inputs]))


def rewrite(g: Graph, rules: list[Rule], strict: bool | None = None) -> Graph:
    """Apply `rules` over `g` in one forward sweep, then drop dead code. `strict` (default:
    env VECGRAD_TYPECHECK=1, as in tests) raises RewriteCycleError on a rule cycle."""
    if strict is None:
        strict = os.environ.get("VECGRAD_TYPECHECK") == "1"
    by_prim: dict[P.Primitive, list[Rule]] = {}
    for r in rules:
        by_prim.setdefault(r.prim, []).append(r)
    ctx = Ctx(by_prim, uses(g), strict)
    ctx.input = g
    for e in g.eqns:
        for a in e.inputs:
            ctx.readers[a] = e
            if a.__class__ is Var:
                ctx.all_readers.setdefault(a, []).append(e)
    same = _UniformConsts()
    for e in g.eqns:
        ins = tuple([ctx.env.get(a, a) if isinstance(a, Var) else same(a) for a in e.inputs])
        if ctx.pending:
            ins = ctx.settle(ins, e)
        new = _add(ctx, e, ins)
        if new is not e.out:
            ctx.env[e.out] = new
    outs = tuple(ctx.env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    if ctx.pending:
        outs = ctx.settle(outs, None)
    return dce(g.replace(eqns=tuple(ctx.eqns), outputs=outs))


class _UniformConsts:
    """Large constants of one value (the zeros each VJP of a view adds its cotangent into),
    one object per (dtype, shape, value): a large constant is keyed by its identity (its
    contents are not hashed), so equal operations on equal zeros would not meet otherwise
    (five identical scatters of one cotangent into five zero arrays). Equal bits only:
    -0.0 and 0.0 stay apart."""

    def __init__(self) -> None:
        self.seen: dict[int, Const] = {}
        self.canon: dict[tuple, Const] = {}

    def __call__(self, a: Const) -> Const:
        v = a.value
        if v.size <= 64:
            return a
        hit = self.seen.get(id(a))
        if hit is not None:
            return hit
        out = a
        if v.dtype.itemsize in (1, 2, 4, 8) and v.flags.c_contiguous:
            u = v.reshape(-1).view(f"u{v.dtype.itemsize}")
            if (u == u[0]).all():
                out = self.canon.setdefault((v.dtype.str, v.shape, u[0].item()), a)
        self.seen[id(a)] = out
        return out


def _add(ctx: Ctx, e: Eqn, ins: tuple) -> Atom:
    """Rewrite and keep e (its inputs now `ins`). Where a value deferred for e was not taken
    by e's rules, e is rewritten again with that value built: what the eager rewrite gives."""
    n0 = len(ctx.eqns)
    new = ctx.add(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    if not ctx.pending:
        return new
    left = [a for a in ins if isinstance(a, Var) and ctx.pending.get(a, (None,))[0] is e]
    if not left:
        return new
    for q in ctx.eqns[n0:]:  # (what e's rules kept, reading the chain as it was)
        ctx.defs.pop(q.out, None)
        ctx.kept.pop(_key(q.prim, q.params, q.inputs), None)
    del ctx.eqns[n0:]
    ctx.pending.pop(e.out, None)
    ins = tuple([ctx.build(a) if a in left and a in ctx.pending else a for a in ins])
    return ctx.add(Eqn(e.prim, ins, e.params, e.out, e.src))
