"""Affine forms: a step's values written as `v = A * c + B` in its one carry c, A and B
computed from the step's other inputs only. A carry whose new value has such a form is a scan
(`cumsum` when A is 1, `cumprod` when B is 0, `affine_scan` otherwise; `c' = max(c, x)` is
`cummax`, and `c' = max(k c, x)` with k a positive constant, max-plus linear, is `cummax` of
the rows rescaled by k^-t: `decayed_extreme`). Forms are built along the step: sums,
differences, products and quotients by carry-free values, negation, a select between the
carry and a new value (`where(m, x, c)`: A = where(m, 0, 1)), and basic reads of a value
that holds the carry broadcast over leading axes (a window's rows)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Params, Var

ONE, ZERO = "one", "zero"  # the trivial parts of an affine form


class _Ops:
    """Emits the equations that compute a form's coefficients (into `new`), with the trivial
    parts ONE and ZERO folded away."""

    def __init__(self, c: Var):
        self.c = c
        self.new: list[Eqn] = []

    def op(self, prim: P.Primitive, *xs: Atom, **params: Any) -> Atom:
        aval = prim.shape_rule(*[x.aval for x in xs], **params)
        e = Eqn(prim, tuple(xs), Params.of(params) if params else Params(), Var(aval), None)
        self.new.append(e)
        return e.out

    def atom(self, f: Any) -> Atom:
        return one(self.c) if f is ONE else zero(self.c) if f is ZERO else f

    def scale(self, f: Any, k: Atom) -> Any:  # f * k
        return ZERO if f is ZERO else k if f is ONE else self.op(P.mul, f, k)

    def div(self, f: Any, k: Atom) -> Any:  # f / k
        return ZERO if f is ZERO else self.op(P.div, self.atom(f), k)

    def neg(self, f: Any) -> Any:
        return ZERO if f is ZERO else self.op(P.neg, self.atom(f))

    def plus(self, f: Any, g: Any, minus: bool = False) -> Any:  # f + g, or f - g
        if g is ZERO:
            return f
        if f is ZERO:
            return self.neg(g) if minus else g
        return self.op(P.sub if minus else P.add, self.atom(f), self.atom(g))

    def select(self, m: Atom, f: Any, g: Any) -> Any:  # where(m, f, g)
        if f is ZERO and g is ZERO:
            return ZERO
        return self.op(P.where, m, self.atom(f), self.atom(g))

    def read(self, f: Any, v: tuple, idx: Any) -> Any:  # (f broadcast to v)[idx]
        if f is ONE or f is ZERO:
            return f
        return self.op(P.getitem, f if f.aval.shape == v else
                       self.op(P.broadcast_to, f, shape=v), idx=idx)


def _full_rows(e: Eqn, c: Var) -> bool:
    """A read `v[idx]` whose index is full over the carry's (trailing) axes."""
    v = e.inputs[0].aval.shape
    idx = e.params["idx"]
    k = len(c.aval.shape)
    return len(idx) == len(v) and all(isinstance(i, P.Sl) and i == P.Sl(0, d, 1) for i, d in
                                      zip(idx[len(v) - k:], c.aval.shape))


def affine(plan: Any) -> tuple[str, dict, list[Eqn]] | None:
    """For a single carry updated affinely: (kind, forms, new equations), where forms maps
    each core value v to (A, B) with v = A * c + B, A and B computed from the inputs by the
    new equations (or ONE/ZERO)."""
    if len(plan.live) != 1:
        return None
    c = plan.carry[plan.live[0]]
    if c.aval.dtype.kind != "f":
        return None
    ops = _Ops(c)
    forms: dict[Var, tuple[Any, Any]] = {c: (ONE, ZERO)}
    out = plan.body.outputs[plan.live[0]]
    if len(plan.core) == 1 and plan.core[0].prim in (P.maximum, P.minimum) and \
            plan.core[0].out is out and c in plan.core[0].inputs:
        e = plan.core[0]
        x = e.inputs[1] if e.inputs[0] is c else e.inputs[0]
        if x is not c and e.out.aval == c.aval:
            return ("cummax" if e.prim is P.maximum else "cummin",
                    {c: (ONE, ZERO), out: (ONE, x)}, ops.new)
    dec = _decayed(plan, c, out)
    if dec is not None:
        return dec[0], {c: (ONE, ZERO), out: dec[1:]}, ops.new
    fold = _python_fold(plan, c, out)
    if fold is not None:  # (A holds the shift: ONE where the carry is compared itself)
        return fold[0], {c: (ONE, ZERO), out: (fold[2], fold[1])}, ops.new
    for e in plan.core:
        f = _step_form(ops, e, [forms.get(a) if isinstance(a, Var) else None
                                for a in e.inputs], c, 1)
        if f is None:
            return None
        forms[e.out] = f
    A, B = forms.get(out, (None, None))
    if A is None or (A is ONE and B is ZERO):
        return None
    kind = "cumsum" if A is ONE else "cumprod" if B is ZERO else "affine_scan"
    return kind, forms, ops.new


_FLIP = {P.lt: P.gt, P.gt: P.lt, P.le: P.ge, P.ge: P.le}
# x wins where `x OP c` (where(x OP c, x, c)): (greater, latest, restart)
_X_WINS = {P.gt: (True, False, False), P.lt: (False, False, False),
           P.ge: (True, True, False), P.le: (False, True, False)}
# x wins unless `x OP c` (where(x OP c, c, x)): c kept where c > x (a max), c >= x, ...
_C_KEPT = {P.lt: (True, True, True), P.gt: (False, True, True),
           P.le: (True, False, True), P.ge: (False, False, True)}


def _decayed(plan: Any, c: Var, out: Var) -> tuple[str, Const, Atom] | None:
    """`c = max(k * c, x)` (np.maximum or np.minimum, either operand order), k a positive
    finite constant no larger than the carry: ("decmax" or "decmin", k, x). Only these two
    equations read the carry, and nothing else reads k * c."""
    if len(plan.core) != 2:
        return None
    mul, ext = plan.core
    if mul.prim is not P.mul or ext.prim not in (P.maximum, P.minimum) or ext.out is not out \
            or mul.out in plan.read or mul.out.aval != c.aval or c not in mul.inputs:
        return None
    k = mul.inputs[1] if mul.inputs[0] is c else mul.inputs[0]
    x = ext.inputs[1] if ext.inputs[0] is mul.out else ext.inputs[0]
    if not isinstance(k, Const) or mul.out not in ext.inputs or x is mul.out or x is c or \
            not isinstance(x, Var) or x.aval != c.aval:
        return None
    kv = np.asarray(k.value)
    if kv.dtype.kind != "f" or not np.all(np.isfinite(kv) & (kv > 0)) or \
            np.broadcast_shapes(kv.shape, c.aval.shape) != c.aval.shape:
        return None
    return ("decmax" if ext.prim is P.maximum else "decmin"), k, x


def _python_fold(plan: Any, c: Var, out: Var) -> tuple[str, Atom, Any] | None:
    """A running selection between the carry (or the carry plus a constant) and a new value
    x, `where(x > c, x, c)` (Python's `c = max(c, x)`, pybuiltins) or any of its tie and NaN
    variants: `max(x, c)` is where(c > x, c, x), `np.where(x >= c, x, c)`, min with `<`,
    either operand order of the comparison. (kind, x, shift), kind "pymax" / "pymin" for
    Python's own rule on the carry itself (an equal or NaN x never wins, a NaN start stays:
    fold_extreme), else "pymax/latest", "pymin/restart", ... (fold_pick: the rules in
    primitives/pickfolds.py), shift the constant a in `c + a` (ONE where none). Only these
    equations read the carry, and nothing else reads the comparison or c + a."""
    core = list(plan.core)
    s, shift, post, last = c, ONE, False, out
    if len(core) == 3 and core[-1].out is out:  # the shift after the selection: the loop
        sh = core[-1]  # carries c = where(...) + a, from c[0] (its cut is one equation on)
        sel_out = next((a for a in sh.inputs if isinstance(a, Var)), None)
        if sel_out is not None and sel_out.aval == c.aval:
            s2, k = _shifted(sh, sel_out, plan, read_ok=True)
            if s2 is not None and core[1].out is sel_out:
                core, shift, post, last = core[:2], k, True, sel_out
    if len(core) == 3:
        s, shift = _shifted(core.pop(0), c, plan)
        if s is None:
            return None
    if len(core) != 2:
        return None
    cmp, sel = core
    if sel.prim is not P.where or sel.out is not last or cmp.out in plan.read or \
            cmp.prim not in _FLIP or sel.inputs[0] is not cmp.out or s not in sel.inputs[1:]:
        return None
    keep = sel.inputs[1] is s
    x = sel.inputs[2] if keep else sel.inputs[1]
    prim = cmp.prim if cmp.inputs == (x, s) else _FLIP[cmp.prim] if cmp.inputs == (s, x) \
        else None  # (as `x OP s`)
    if prim is None or x is s or x is c or not isinstance(x, Var) or x.aval != c.aval:
        return None
    greater, latest, restart = (_C_KEPT if keep else _X_WINS)[prim]
    kind = ("pymax" if greater else "pymin") + ("/latest" if latest else "") + \
        ("/restart" if restart else "") + ("/post" if post else "")
    return kind, x, shift


def _shifted(e: Eqn, c: Var, plan: Any, read_ok: bool = False) -> tuple[Any, Any]:
    """`c + k`, `k + c` or `c - k` with k a finite scalar constant (not zero), read only by
    the selection (unless read_ok): (its value, k as a Const of c's dtype); else (None,
    None)."""
    if e.prim not in (P.add, P.sub) or (e.out in plan.read and not read_ok) or \
            e.out.aval != c.aval or c not in e.inputs:
        return None, None
    k = e.inputs[1] if e.inputs[0] is c else e.inputs[0] if e.prim is P.add else None
    if not isinstance(k, Const) or np.ndim(k.value) != 0:
        return None, None
    v = float(np.asarray(k.value))
    if not np.isfinite(v) or v == 0 or np.asarray(k.value).dtype.kind not in "fiu":
        return None, None
    return e.out, Const(np.asarray(-v if e.prim is P.sub else v, c.aval.dtype))


def python_extreme(v: Any, kind: str, shift: Any = ONE) -> Any:
    """The running selection a `_python_fold` kind computes over the rows of v (v[0] the
    initial value). Python's own `max` ("pymax"): each row keeps the previous result unless
    strictly greater, so a NaN row never wins, a NaN first row is kept throughout, and the
    winner of equal rows is the earliest: one `fold_extreme` (primitives/folds.py), NumPy's
    fmax running value, and a VJP that sends each step's cotangent to its winner, as Python's
    selections do (cummax's own VJP sends ties to the latest row). The other tie and NaN
    rules ("pymax/latest/restart": `max(x, c)`) and any selection against the carry plus a
    constant (max-plus: `max(y[i], y[i-1] - 0.1)`) are one `fold_pick`, whose VJP reads x."""
    name, *rules = kind.split("/")
    greater = name == "pymax"
    rules = [r for r in rules if r != "post"]  # (loops.py: the first step unshifted)
    if not rules and shift is ONE:
        return P.fold_extreme(v, axis=0, greater=greater)
    return P.fold_pick(v, axis=0, greater=greater, latest="latest" in rules,
                       restart="restart" in rules,
                       shift=0.0 if shift is ONE else float(shift.value))


def fold_said(kind: str, shift: Any = ONE) -> str:
    """explain's words for a `_python_fold` kind."""
    name, *rules = kind.split("/")
    rules = [r for r in rules if r != "post"]
    if not rules and shift is ONE:
        return f"running {name[2:]} (fold_extreme), as Python's {name[2:]}() keeps the " \
            "first of equal items"
    what = f"running {name[2:]} (fold_pick)" if shift is ONE else \
        f"running {name[2:]}-plus scan of c + {float(shift.value):g} (fold_pick)"
    tie = "latest" if "latest" in rules else "first"
    nan = ", restarting after a NaN" if "restart" in rules else ""
    return f"{what}, keeping the {tie} of equal items{nan} as the loop's selection does"


def decayed_extreme(v: Any, k: np.ndarray, greater: bool) -> Any:
    """Rows 1.. of m[t] = max(k m[t-1], v[t]) (min alike) from m[0] = v[0], k > 0 constant.
    A positive scale keeps the order, so m[t] = max_s k^(t-s) v[s] = k^t max_{s<=t} v[s]
    k^-s: one running extreme of rescaled rows, scaled back (each value rounded a few times
    where the loop rounds once per step since its winner). Where k^t or k^-t leaves
    [r^-1, r] (r the fourth root of the dtype's largest number: 1e77 for float64) the
    rescaled rows could overflow: NotBatchable (the caller keeps the loop)."""
    T1, dt = v.shape[0], v.dtype
    t = np.arange(T1, dtype=np.float64).reshape((T1,) + (1,) * (v.ndim - 1))
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        up = np.power(np.asarray(k, np.float64), t)
        down = np.power(np.asarray(k, np.float64), -t)
    r = float(np.finfo(dt).max) ** 0.25
    if not (np.all(up <= r) and np.all(up >= 1 / r) and np.all(down <= r) and
            np.all(down >= 1 / r)):
        raise P.NotBatchable("decayed extreme: k^t leaves the safe range")
    ext = (P.cummax if greater else P.cummin)(v * down.astype(dt), axis=0)
    rows = (P.Sl(1, T1, 1),) + full_slices(v.shape[1:])
    return P.getitem(ext, idx=rows) * up[1:].astype(dt)


def full_slices(s: tuple[int, ...]) -> tuple:
    """The basic index of every element of axes of these sizes (batch's passes share it)."""
    return tuple(P.Sl(0, d, 1) for d in s)


def _step_form(ops: _Ops, e: Eqn, fs: list, c: Var, k: int) -> tuple | None:
    """The form of e's result from its operands' forms (None: carry-free), each form a tuple
    of k coefficients (one per carry) and the carry-free part last; None where e is not
    affine in the carries."""
    if not holds(e.out.aval, c.aval):
        return None
    p = e.prim
    if all(f is None for f in fs):
        return None
    if p is P.getitem and fs[0] is not None:
        # v[idx] with idx full over the carry's axes: (each part broadcast)[idx]
        if not _full_rows(e, c):
            return None
        return tuple(ops.read(x, e.inputs[0].aval.shape, e.params["idx"]) for x in fs[0])
    if p in (P.add, P.sub):
        fu, fv = (f or (ZERO,) * k + (a,) for f, a in zip(fs, e.inputs))
        return tuple(ops.plus(x, y, p is P.sub) for x, y in zip(fu, fv))
    if p in (P.mul, P.div) and sum(f is not None for f in fs) == 1 and \
            (fs[0] is not None or p is P.mul):
        m = e.inputs[1] if fs[0] is not None else e.inputs[0]
        f = fs[0] or fs[1]
        return tuple((ops.div if p is P.div else ops.scale)(x, m) for x in f)
    if p is P.neg:
        return tuple(ops.neg(x) for x in fs[0])
    if p is P.where and fs[0] is None:
        # where(m, f, g): a select of the carry and a new value is affine with a 0/1
        # coefficient (the scan composes such steps exactly)
        fu, fv = (f or (ZERO,) * k + (a,) for f, a in zip(fs[1:], e.inputs[1:]))
        return tuple(ops.select(e.inputs[0], x, y) for x, y in zip(fu, fv))
    return None


MAX_COUPLED = 4  # carries at most in one linear system (its matrices are k x k per element)


def linear(plan: Any) -> tuple[str, dict, list[Eqn]] | None:
    """For k (2 to MAX_COUPLED) live carries of one shape updated together linearly,
    `c_i' = sum_j A_ij * c_j + B_i`: ("linear", forms, new equations), where forms maps each
    core value to its k coefficients and carry-free part (ONE/ZERO or atoms the new
    equations compute from the inputs)."""
    live = plan.live
    k = len(live)
    cs = [plan.carry[i] for i in live]
    if not 2 <= k <= MAX_COUPLED or any(x.aval != cs[0].aval for x in cs) or \
            cs[0].aval.dtype.kind != "f":
        return None
    ops = _Ops(cs[0])
    forms: dict[Var, tuple] = {x: tuple(ONE if j == i else ZERO for j in range(k)) + (ZERO,)
                               for i, x in enumerate(cs)}
    for e in plan.core:
        f = _step_form(ops, e, [forms.get(a) if isinstance(a, Var) else None
                                for a in e.inputs], cs[0], k)
        if f is None:
            return None
        forms[e.out] = f
    for i in live:
        o = plan.body.outputs[i]
        if o not in forms:  # (a new value that reads no carry)
            if isinstance(o, Var) and o in plan.dep:
                return None
            forms[o] = (ZERO,) * k + (o,)
    return "linear", forms, ops.new


def holds(v: Any, c: Any) -> bool:
    """A value of aval v can be an affine form in a carry of aval c: c's dtype, and c's
    shape its trailing axes (the carry broadcast over leading ones, as a window's rows)."""
    return v.dtype == c.dtype and v.shape[len(v.shape) - len(c.shape):] == c.shape


def one(c: Var) -> Const:
    return Const(np.ones((), c.aval.dtype))


def zero(c: Var) -> Const:
    return Const(np.zeros((), c.aval.dtype))


__all__ = ["MAX_COUPLED", "ONE", "ZERO", "affine", "fold_said", "holds", "linear", "one",
           "python_extreme", "zero"]
