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
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import primitives as P
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

    def __init__(self, rules: dict[P.Primitive, list[Rule]], n_uses: dict[Var, int]):
        self.rules = rules
        self._uses = n_uses
        self.defs: dict[Var, Eqn] = {}
        self.eqns: list[Eqn] = []
        self.env: dict[Var, Atom] = {}
        self.memo: dict[Any, Any] = {}
        self.readers: dict[Var, Eqn] = {}  # the input graph's equation reading a var (the last)
        self.all_readers: dict[Var, list[Eqn]] = {}  # (all of them, in order)
        self.pending: dict[Var, tuple[Eqn, Any, Callable[[], Atom]]] = {}
        self.kept: dict[tuple, Var] = {}  # (prim, params, inputs) of the equations kept

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

    def dropped_use(self, v: Var) -> None:
        """A rule replaced two reads of `v` by one (x + x = 2 * x)."""
        if v in self._uses:
            self._uses[v] -= 1

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
        """Rewrite `e` to a fixpoint and keep it; returns the atom that now holds its value."""
        while True:
            r = None
            for rule in self.rules.get(e.prim, ()):
                r = rule.rewrite(e, self)
                if r is not None:
                    break
            if r is None:
                # a rule's helper equal to one kept before (a row sum a gradient already
                # takes) is that one: shared, as CSE would
                key = _key(e.prim, e.params, e.inputs)
                same = self.kept.get(key)
                if same is not None and same.aval == e.out.aval:
                    return same
                self.kept[key] = e.out
                self.defs[e.out] = e
                self.eqns.append(e)
                return e.out
            if not isinstance(r, tuple):
                return r
            prim, ins, params = r
            e = Eqn(prim, tuple(ins), Params(params), e.out, e.src)


def _key(prim: P.Primitive, params: Params, inputs: tuple) -> tuple:
    """What makes two equations compute the same value (constants by contents, as in CSE)."""
    return (prim, params, tuple([a.key() if a.__class__ is Const else a for a in inputs]))


def rewrite(g: Graph, rules: list[Rule]) -> Graph:
    """Apply `rules` over `g` in one forward sweep, then drop dead code."""
    by_prim: dict[P.Primitive, list[Rule]] = {}
    for r in rules:
        by_prim.setdefault(r.prim, []).append(r)
    ctx = Ctx(by_prim, uses(g))
    for e in g.eqns:
        for a in e.inputs:
            ctx.readers[a] = e
            if a.__class__ is Var:
                ctx.all_readers.setdefault(a, []).append(e)
    for e in g.eqns:
        ins = tuple([ctx.env.get(a, a) if isinstance(a, Var) else a for a in e.inputs])
        if ctx.pending:
            ins = ctx.settle(ins, e)
        new = _add(ctx, e, ins)
        if new is not e.out:
            ctx.env[e.out] = new
    outs = tuple(ctx.env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    if ctx.pending:
        outs = ctx.settle(outs, None)
    return dce(g.replace(eqns=tuple(ctx.eqns), outputs=outs))


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
