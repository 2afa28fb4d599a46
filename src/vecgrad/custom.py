"""User-defined derivative rules: `custom_vjp` (JAX's API).

Called inside a trace, a custom_vjp function records
- the user's `fwd`, traced inline: its operations are batched and simplified like any other
  code, and give the outputs and the residuals;
- one `custom_vjp_call` equation, whose value is fwd's floating-point outputs passed through
  (behind a stop_gradient, so fwd's own derivative is never taken) and whose VJP rule calls
  the user's `bwd` on the residuals and the output cotangents. bwd is traced into the
  backward graph, so it is differentiated again for higher orders (through the residuals,
  as in JAX), and it is transposed for forward mode (which is reverse mode transposed).
Outside any trace the function is simply called.

Several output leaves are packed into one vector for the equation (its value is one array).
In a loop the equations batch: a batched call's VJP traces bwd once, for one instance, and
batches that graph (interpret.vmap), summing the cotangents of operands shared by all
instances. (`custom_jvp`, built on custom_vjp and vg.vjp, is in custom_jvp.py.)
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import primitives as P
from .errors import ArgumentError, ShapeError, _where, user_src
from .inputs import new_input
from .interpret import inline, vmap
from .ir import Aval, Graph, Var
from .pytree import describe, flatten, unflatten
from .tracing import Builder, Tracer, current_builder, to_atom

__all__ = ["custom_vjp", "custom_vjp_call"]


class Rule:
    """The parameters of a `custom_vjp_call` equation: which function, its static parts and
    structures, and how the equation was batched (`levels`, innermost first: the flags of
    its inputs and the batch size). Equal for calls with equal structure, so that calls in
    a loop batch."""

    __slots__ = ("_key", "avals", "custom", "levels", "n_res", "n_x", "nondiff", "out", "res_td",
                 "x_tds")

    def __init__(self, custom: custom_vjp, nondiff: tuple, x_tds: tuple, res_td: Any,
                 out: tuple, avals: tuple, levels: tuple = ()):
        self.custom, self.nondiff, self.x_tds, self.res_td = custom, nondiff, x_tds, res_td
        self.out = out  # (out treedef, indices of the float leaves, their avals)
        self.avals = avals  # one instance's input avals (x leaves, residual leaves, packed)
        self.levels = levels
        self.n_x = sum(_count(t) for t in x_tds)
        self.n_res = len(avals) - self.n_x - 1
        self._key = (id(custom), id(custom.bwd), nondiff, x_tds, res_td, out, avals, levels)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and other.custom is self.custom and \
            other._key == self._key

    def __repr__(self) -> str:
        return f"custom_vjp[{getattr(self.custom, '__name__', 'fn')}]"

    def batched(self, flags: tuple, n: int) -> Rule:
        return Rule(self.custom, self.nondiff, self.x_tds, self.res_td, self.out, self.avals,
                    self.levels + ((flags, n),))


def _count(td: Any) -> int:
    """The number of array leaves of a treedef."""
    if td[0] == "*":
        return 1
    if td[0] in ("tuple", "list"):
        return sum(_count(c) for c in td[1])
    return sum(_count(c) for c in td[2]) if td[0] == "dict" else 0


# ------------------------------------------------------------------- the primitive

def _shape(*avals: Aval, rule: Rule) -> Aval:
    return avals[-1]


def _batch(n: int, batched: tuple[bool, ...], *ins: Any, rule: Rule) -> Any:
    packed = ins[-1]
    if not batched[-1]:  # the value is the packed outputs: one row per instance
        packed = P.broadcast_to(P.reshape(packed, shape=(1,) + packed.shape),
                                shape=(n,) + packed.shape)
    return custom_vjp_call(*ins[:-1], packed, rule=rule.batched(tuple(batched[:-1]), n))


def _vjp(ct: Any, ans: Any, *ins: Any, rule: Rule) -> tuple:
    """bwd's cotangents for the x leaves; none for the residuals; the packed value, passed
    through, gets ct (it is a stop_gradient of fwd's outputs, so that goes nowhere)."""
    if rule.levels:
        cts = _batched_bwd(ct, ins, rule)
    else:
        cts = _call_bwd(rule, list(ins[rule.n_x:rule.n_x + rule.n_res]), _unpack(ct, rule, ()))
    return tuple(cts) + (None,) * rule.n_res + (ct,)


custom_vjp_call = P.register(P.Primitive(
    "custom_vjp_call", lambda *xs, rule: xs[-1], _shape, _vjp, _batch))


def _unpack(packed: Any, rule: Rule, lead: tuple) -> list:
    """The float output leaves from the packed value (`lead`: batch axes in front)."""
    avals = rule.out[2]
    if len(avals) == 1:
        return [packed]
    out, o = [], 0
    for a in avals:
        idx = P.normalize_index((Ellipsis, slice(o, o + a.size)), packed.shape)
        x = P.reshape(P.getitem(packed, idx=idx), shape=lead + a.shape)
        out.append(x if x.dtype == a.dtype else P.cast(x, dtype=a.dtype))
        o += a.size
    return out


def _call_bwd(rule: Rule, res: list, cts: list) -> list:
    """Run the user's bwd on residual and cotangent leaves; its cotangents of the x leaves
    (zeros for None), checked against the x avals."""
    out_td, float_idx, _ = rule.out
    ct_leaves: list = [None] * _count(out_td)
    for i, c in zip(float_idx, cts):
        ct_leaves[i] = c
    custom = rule.custom
    got = custom.bwd(*[v for _, v in rule.nondiff], unflatten(rule.res_td, res),
                     unflatten(out_td, ct_leaves))
    if not isinstance(got, (tuple, list)) or len(got) != len(rule.x_tds):
        raise ArgumentError(f"custom_vjp bwd of {custom.__name__} must return a tuple with one "
                            f"cotangent per differentiable argument ({len(rule.x_tds)}), got "
                            f"{type(got).__name__}{_bwd_where(custom)}")
    flat = []
    for g, td in zip(got, rule.x_tds):
        n = _count(td)
        if g is None or n == 0:  # (a static argument's cotangent is ignored)
            flat += [None] * n
            continue
        leaves, gtd = flatten(g)
        if len(leaves) != n:
            raise ArgumentError(f"custom_vjp bwd of {custom.__name__} returned a cotangent "
                                f"of structure {describe(gtd)} for an argument of structure "
                                f"{describe(td)}{_bwd_where(custom)}")
        flat += leaves
    xs = rule.avals[:rule.n_x]
    out = []
    for g, a in zip(flat, xs):
        if g is None or a.dtype.kind not in "fc":
            out.append(None)
            continue
        if np.shape(g) != a.shape:
            raise ShapeError(f"custom_vjp bwd of {custom.__name__} returned a cotangent of "
                             f"shape {np.shape(g)} for an argument of shape {a.shape}"
                             f"{_bwd_where(custom)}")
        out.append(g)
    return out


def _bwd_where(custom: custom_vjp) -> str:
    code = getattr(custom.bwd, "__code__", None)
    return f" (bwd is defined at {code.co_filename}:{code.co_firstlineno})" if code else \
        _where(user_src())


def _level_aval(rule: Rule, i: int, depth: int) -> Aval:
    """Input i's aval after the first `depth` batchings."""
    a = rule.avals[i]
    lead = tuple(n for flags, n in reversed(rule.levels[:depth])
                 if i == len(rule.avals) - 1 or flags[i])
    return Aval(lead + a.shape, a.dtype)


@functools.lru_cache(maxsize=256)
def _bwd_graph(rule: Rule, depth: int) -> Graph:
    """bwd as a graph from (residual leaves, float output cotangent leaves) to the x leaves'
    cotangents, batched `depth` times as the equation was."""
    n_x, n_res = rule.n_x, rule.n_res
    res_idx = range(n_x, n_x + n_res)
    if depth == 0:
        with Builder() as b:
            res = [new_input(rule.avals[i], b) for i in res_idx]
            cts = [new_input(a, b) for a in rule.out[2]]
            outs = _call_bwd(rule, res, cts)
            atoms = [to_atom(g) if g is not None else
                     to_atom(np.zeros(a.shape, a.dtype))
                     for g, a in zip(outs, rule.avals[:n_x])]
        return b.build(atoms)
    inner = _bwd_graph(rule, depth - 1)
    flags, n = rule.levels[depth - 1]
    lead = _level_aval(rule, len(rule.avals) - 1, depth).shape[:-len(rule.avals[-1].shape) or
                                                               None]
    res_vars = [Var(_level_aval(rule, i, depth)) for i in res_idx]
    ct_vars = [Var(Aval(lead + a.shape, a.dtype)) for a in rule.out[2]]
    with Builder(res_vars + ct_vars) as b:
        got = vmap(inner, n, [(v, flags[i]) for v, i in zip(res_vars, res_idx)] +
                   [(v, True) for v in ct_vars])
        atoms = []
        for i, (a, bt) in enumerate(got):
            t = Tracer(b, a)
            want = _level_aval(rule, i, depth)
            if bt and not flags[i]:  # an operand shared by the instances: their sum
                t = P.reduce_sum(t, axes=(0,))
            elif flags[i] and not bt:
                t = P.broadcast_to(P.reshape(t, shape=(1,) + t.shape), shape=want.shape)
            atoms.append(t.atom)
    return b.build(atoms)


def _batched_bwd(ct: Any, ins: Sequence, rule: Rule) -> list:
    depth = len(rule.levels)
    lead = ct.shape[:len(ct.shape) - len(rule.avals[-1].shape)]
    cts = _unpack(ct, rule, lead)
    g = _bwd_graph(rule, depth)
    b = current_builder()
    res = [to_atom(x, (), b) for x in ins[rule.n_x:rule.n_x + rule.n_res]]
    outs = inline(g, res + [to_atom(c, (), b) for c in cts])
    return [Tracer(b, a) if rule.avals[i].dtype.kind in "fc" else None
            for i, a in enumerate(outs)]


# ---------------------------------------------------------------------- the user API

class custom_vjp:
    """A function with a user-defined VJP, as `jax.custom_vjp`:

        @vg.custom_vjp
        def f(x, y): ...
        def f_fwd(x, y): return f(x, y), residuals       # (output, what bwd needs)
        def f_bwd(residuals, g): return (gx, gy)         # one cotangent per argument
        f.defvjp(f_fwd, f_bwd)

    Arguments in `nondiff_argnums` (static values: functions, ints, strings) are passed to
    fwd unchanged and to bwd first, before the residuals, and get no cotangent. A cotangent
    may be None (zero). Works under grad (of any order: bwd is differentiated through the
    residuals), jit, vjp, jvp and inside loops that batch."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        if not callable(fun):
            raise ArgumentError(f"custom_vjp expects a function, got {type(fun).__name__}"
                                f"{_where(user_src())}")
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self._in_fwd = 0  # inside its own fwd, a call is the plain function (JAX's idiom)
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the forward (returning `(output, residuals)`) and backward rules."""
        if not callable(fwd) or not callable(bwd):
            raise ArgumentError(f"defvjp expects two functions (fwd, bwd){_where(user_src())}")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        b = current_builder()
        if b is None or self._in_fwd:
            return self.fun(*args)
        if self.fwd is None:
            raise ArgumentError(f"custom_vjp function {self.__name__} was called without "
                                f"rules: call {self.__name__}.defvjp(fwd, bwd) first"
                                f"{_where(user_src())}")
        return _traced_call(self, b, args)


def _traced_call(custom: custom_vjp, b: Builder, args: tuple) -> Any:
    nd = custom.nondiff_argnums
    for i in nd:
        if isinstance(args[i], Tracer):
            raise ArgumentError(f"argument {i} of {custom.__name__} is in nondiff_argnums but "
                                "is a traced array: pass arrays as ordinary arguments (bwd may "
                                f"return None for them){_where(user_src())}")
    try:
        hash(tuple(args[i] for i in nd))
    except TypeError:
        raise ArgumentError(f"the nondiff_argnums arguments of {custom.__name__} must be "
                            f"hashable (static values){_where(user_src())}") from None
    custom._in_fwd += 1
    try:
        res_out = custom.fwd(*args)
    finally:
        custom._in_fwd -= 1
    if not isinstance(res_out, (tuple, list)) or len(res_out) != 2:
        raise ArgumentError(f"custom_vjp fwd of {custom.__name__} must return a pair "
                            f"(output, residuals){_where(user_src())}")
    out, res = res_out
    x_args = [a for i, a in enumerate(args) if i not in nd]
    x_leaves, x_tds = [], []
    for a in x_args:
        leaves, td = flatten(a)
        x_leaves += leaves
        x_tds.append(td)
    res_leaves, res_td = flatten(res)
    out_leaves, out_td = flatten(out)
    dts = [np.result_type(x) if not isinstance(x, Tracer) else x.dtype for x in out_leaves]
    float_idx = tuple(i for i, d in enumerate(dts) if d.kind in "fc")
    if not float_idx or not any(isinstance(x, Tracer) for x in x_leaves):
        return out
    kinds = {dts[i].kind for i in float_idx}
    if len(kinds) > 1:
        raise NotImplementedError(f"custom_vjp {custom.__name__}: real and complex outputs "
                                  "together; return them from two custom_vjp functions"
                                  f"{_where(user_src())}")
    floats = [Tracer(b, to_atom(out_leaves[i], (), b)) for i in float_idx]
    packed = _pack(floats)
    ins = [Tracer(b, to_atom(x, (), b)) for x in x_leaves + res_leaves] + \
        [P.stop_gradient(packed)]
    avals = tuple(t.aval for t in ins)
    rule = Rule(custom, tuple((i, args[i]) for i in nd), tuple(x_tds), res_td,
                (out_td, float_idx, tuple(t.aval for t in floats)), avals)
    y = custom_vjp_call(*ins, rule=rule)
    new = list(out_leaves)
    for i, t in zip(float_idx, _unpack(y, rule, ())):
        new[i] = t
    return unflatten(out_td, new)


def _pack(floats: list[Tracer]) -> Tracer:
    if len(floats) == 1:
        return floats[0]
    dt = np.result_type(*[t.dtype for t in floats])
    parts = [P.reshape(t if t.dtype == dt else P.cast(t, dtype=dt), shape=(t.size,))
             for t in floats]
    return P.concatenate(*parts, axis=0)
