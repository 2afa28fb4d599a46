"""The public transformations: jit, grad, value_and_grad, vjp.

Each traced function is compiled once per input signature (the pytree structure, the shapes
and dtypes of the array leaves, and the values of static leaves) and cached. A cache hit
flattens the arguments, looks the signature up, and calls the generated NumPy code.
"""
from __future__ import annotations

import contextlib
import gc
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import passes
from .autodiff import vjp_graph
from .backends import Compiled, compile_graph
from .errors import Src, TraceError, _where, user_src
from .ir import Aval, Const, Graph, Var
from .pytree import _ARRAY, describe, flatten, unflatten
from .tracing import Builder, Tracer, new_input, to_atom

# The compile cache: function -> {(kind, options, signature) -> Entry}.
_CACHE: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()


# Graphs of more equations than this are not kept in the cache once compiled (counts are):
# an unbatched trace can hold a million objects, which the cyclic GC would rescan forever.
KEEP_STAGE_EQNS = 20_000


@dataclass
class Entry:
    """One compiled signature: the generated code, the graph at each stage (those of at most
    KEEP_STAGE_EQNS equations), their equation counts, the batching notes, stage timings."""

    compiled: Compiled
    finish: Callable[[tuple], Any]
    stages: dict[str, Graph] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    notes: tuple = ()

    def __post_init__(self) -> None:
        self.counts = {k: len(g.eqns) for k, g in self.stages.items()}
        if "batch" in self.stages:
            self.notes = self.stages["batch"].notes
        self.stages = {k: g for k, g in self.stages.items() if len(g.eqns) <= KEEP_STAGE_EQNS}


def _fun_src(fun: Callable) -> Src | None:
    code = getattr(fun, "__code__", None)
    return Src(code.co_filename, code.co_firstlineno, code.co_name) if code else None


def _signature(args: tuple) -> tuple[list, Any, tuple]:
    if all(type(x) is np.ndarray for x in args):  # the common call: saves ~1.5 us per call
        return list(args), ("tuple", (_ARRAY,) * len(args)), \
            tuple((x.shape, x.dtype) for x in args)
    leaves, td = flatten(args)
    if any(isinstance(x, Tracer) for x in leaves):
        raise TraceError("vecgrad transformations cannot be nested (a transformed function was "
                         "called on traced arrays): call the plain Python function instead")
    return leaves, td, tuple((x.shape, x.dtype) if type(x) is np.ndarray else  # the fast path
                             (np.shape(x), np.result_type(x)) for x in leaves)


def _trace(fun: Callable, td: Any, avals: Sequence[Aval],
           hash_cons: bool = True) -> tuple[Builder, Any]:
    with Builder(hash_cons=hash_cons) as b:
        tracers = [new_input(a, b) for a in avals]
        res = fun(*unflatten(td, tracers))
    return b, res


def _split_aux(res: Any, has_aux: bool, fun: Callable) -> tuple[Any, Any]:
    if not has_aux:
        return res, None
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"has_aux=True requires the function to return a pair (out, aux)"
                        f"{_where(_fun_src(fun))}")
    return res[0], res[1]


def _count_leaves(td: Any) -> int:
    if td[0] == "*":
        return 1
    if td[0] in ("tuple", "list"):
        return sum(_count_leaves(c) for c in td[1])
    if td[0] == "dict":
        return sum(_count_leaves(c) for c in td[2])
    return 0


def _arg_ranges(td: Any) -> list[range]:
    out, start = [], 0
    for child in td[1]:
        n = _count_leaves(child)
        out.append(range(start, start + n))
        start += n
    return out


def _norm_argnums(argnums: int | Sequence[int], nargs: int, fun: Callable) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"argnums {argnums} out of range for {nargs} positional arguments"
                             f"{_where(_fun_src(fun))}")
    return tuple(a % nargs for a in nums)


def _check_wrt(avals: Sequence[Aval], ranges: list[range], nums: tuple[int, ...],
               td: Any, fun: Callable) -> None:
    for a in nums:
        if not ranges[a]:
            raise TypeError(f"argument {a} is static ({describe(td[1][a])}), so it cannot be "
                            "differentiated: pass a NumPy float array (np.asarray(x, float))"
                            f"{_where(_fun_src(fun))}")
        for i in ranges[a]:
            if avals[i].dtype.kind not in "fc":
                raise TypeError(f"grad requires floating-point inputs, but argument {a} has an "
                                f"array of dtype {avals[i].dtype}: convert it with "
                                f"x.astype(np.float64), or leave it out of argnums"
                                f"{_where(_fun_src(fun))}")


def _scalar_out(out: Any, fun: Callable) -> Any:
    if isinstance(out, Tracer):
        if out.shape != ():  # point at the line that computed the output
            src = next((e.src for e in reversed(out._b.eqns) if e.out is out.atom), None)
            raise TypeError(f"grad requires a scalar output, but the function returned an array "
                            f"of shape {out.shape}{_where(src or _fun_src(fun))}. Reduce it "
                            "first (e.g. `.sum()`), or use vg.vjp for non-scalar outputs.")
        if out.dtype.kind == "c":  # as JAX: never silently the real part's gradient
            raise TypeError(f"grad requires a real-valued output, got {out.dtype}"
                            f"{_where(_fun_src(fun))}. Differentiate a real function of it "
                            "(vnp.abs(out) ** 2, vnp.real(out)), or use vg.vjp with a "
                            "complex cotangent.")
        if out.dtype.kind != "f":
            raise TypeError(f"grad requires a floating-point output, got {out.dtype}"
                            f"{_where(_fun_src(fun))}")
        return out
    arr = np.asarray(out)
    if arr.shape != () or arr.dtype.kind != "f":
        raise TypeError(f"grad requires a scalar float output, got {type(out).__name__} "
                        f"{getattr(arr, 'shape', '')}{_where(_fun_src(fun))}")
    return arr


def _forward(g: Graph, times: dict, stages: dict) -> Graph:
    stages["traced"] = stages["cse"] = g  # recorded hash-consed: CSE is done (see passes)
    return passes.run(g, passes.FORWARD, times, stages)


def _compile_grad(fun: Callable, td: Any, avals: list[Aval], argnums: Any, has_aux: bool,
                  value: bool) -> Entry:
    times: dict[str, float] = {}
    stages: dict[str, Graph] = {}
    t0 = time.perf_counter()
    nums = _norm_argnums(argnums, len(td[1]), fun)
    ranges = _arg_ranges(td)
    _check_wrt(avals, ranges, nums, td, fun)
    b, res = _trace(fun, td, avals)
    out, aux = _split_aux(res, has_aux, fun)
    out = _scalar_out(out, fun)
    aux_leaves, aux_td = flatten(aux)
    g = b.build([to_atom(out)] + [to_atom(x) for x in aux_leaves])
    times["trace"] = time.perf_counter() - t0
    g = _forward(g, times, stages)
    wrt = [i for a in nums for i in ranges[a]]
    t0 = time.perf_counter()
    gg = vjp_graph(g, wrt, [Const(np.ones((), g.outputs[0].aval.dtype))] +
                   [None] * len(aux_leaves))
    times["ad"] = time.perf_counter() - t0
    stages["grad"] = gg
    gg = passes.run(gg, [("grad." + n, p) for n, p in passes.BACKWARD + passes.LOWER], times,
                    stages)
    stages["final"] = gg  # the graph that is compiled
    t0 = time.perf_counter()
    compiled = compile_graph(gg, f"grad_{getattr(fun, '__name__', 'fn')}")
    times["codegen"] = time.perf_counter() - t0
    n_aux = len(aux_leaves)
    arg_tds = [td[1][a] for a in nums]
    single = isinstance(argnums, int)

    def finish(outs: tuple) -> Any:
        val = outs[0]
        k = 1 + n_aux
        grads = []
        for atd, a in zip(arg_tds, nums):
            n = len(ranges[a])
            grads.append(unflatten(atd, outs[k:k + n]))
            k += n
        grads = grads[0] if single else tuple(grads)
        if has_aux:
            aux_v = unflatten(aux_td, outs[1:1 + n_aux])
            return ((val, aux_v), grads) if value else (grads, aux_v)
        return (val, grads) if value else grads
    return Entry(compiled, finish, stages, times,
                 {"forward_vars": frozenset(e.out for e in g.eqns), "wrt": wrt})


def _compile_jit(fun: Callable, td: Any, avals: list[Aval]) -> Entry:
    times: dict[str, float] = {}
    stages: dict[str, Graph] = {}
    t0 = time.perf_counter()
    b, res = _trace(fun, td, avals)
    leaves, out_td = flatten(res)
    g = b.build([to_atom(x) for x in leaves])
    times["trace"] = time.perf_counter() - t0
    g = passes.run(_forward(g, times, stages), passes.LOWER, times, stages)
    stages["final"] = g
    t0 = time.perf_counter()
    compiled = compile_graph(g, f"jit_{getattr(fun, '__name__', 'fn')}")
    times["codegen"] = time.perf_counter() - t0
    return Entry(compiled, lambda outs: unflatten(out_td, outs), stages, times,
                 {"out_td": out_td})


def trace_graph(fun: Callable, args: tuple, hash_cons: bool = True) -> Graph:
    """The traced (unbatched, unoptimized) graph of `fun` on `args`, whose outputs are the
    array leaves of its result; with `hash_cons=False`, repeated operations stay repeated."""
    _, td, sig = _signature(args)
    with _gc_paused():
        b, res = _trace(fun, td, [Aval(s, np.dtype(d)) for s, d in sig], hash_cons)
    return b.build([to_atom(x) for x in flatten(res)[0]])


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Compiling allocates ~10 objects per traced operation and frees none until the end; the
    cyclic GC would rescan them all again and again (quadratic time in the trace length)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Transformed:
    """A function transformed by jit/grad/value_and_grad, with its per-signature cache."""

    def __init__(self, fun: Callable, kind: str, argnums: Any = 0, has_aux: bool = False):
        if not callable(fun):
            raise TypeError(f"expected a function, got {type(fun).__name__}")
        self.fun, self.kind, self.argnums, self.has_aux = fun, kind, argnums, has_aux
        self.__wrapped__ = fun
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__name__ = getattr(fun, "__name__", "fn")
        self._opts = (kind, argnums if isinstance(argnums, int) else tuple(argnums), has_aux)

    def entry(self, *args: Any) -> tuple[Entry, list]:
        """The compiled entry for these arguments (compiling on a miss) and the array leaves."""
        leaves, td, sig = _signature(args)
        try:
            per_fun = _CACHE.setdefault(self.fun, {})
        except TypeError:  # not weak-referenceable: cache on this object only
            per_fun = self.__dict__.setdefault("_local_cache", {})
        key = (self._opts, td, sig)
        e = per_fun.get(key)
        if e is None:
            avals = [Aval(s, np.dtype(d)) for s, d in sig]
            with _gc_paused():
                if self.kind == "jit":
                    e = _compile_jit(self.fun, td, avals)
                else:
                    e = _compile_grad(self.fun, td, avals, self.argnums, self.has_aux,
                                      self.kind == "value_and_grad")
            per_fun[key] = e
        return e, leaves

    def __call__(self, *args: Any) -> Any:
        e, leaves = self.entry(*args)
        return e.finish(e.compiled.fn(*leaves))


def jit(fun: Callable) -> Transformed:
    """Compile `fun` (traced once per input signature) into straight-line NumPy code."""
    return Transformed(fun, "jit")


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Transformed:
    """Gradient of a scalar-valued `fun` with respect to the arguments `argnums`.

    Like `jax.grad`: arguments are pytrees of NumPy arrays; the result has the structure of
    the differentiated argument (a tuple of them when `argnums` is a tuple). With
    `has_aux=True`, `fun` returns `(out, aux)` and the result is `(grads, aux)`.
    """
    return Transformed(fun, "grad", argnums, has_aux)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Transformed:
    """Like `grad`, but returns `(value, grads)` (or `((value, aux), grads)`)."""
    return Transformed(fun, "value_and_grad", argnums, has_aux)


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """`(out, vjp_fn)` where `vjp_fn(ct)` returns one cotangent per primal (a tuple).

    Cotangents of non-float leaves are None. `ct` must have the structure and shapes of
    `out`. With has_aux, returns `(out, vjp_fn, aux)`.
    """
    leaves, td, sig = _signature(primals)
    avals = [Aval(s, np.dtype(d)) for s, d in sig]
    b, res = _trace(fun, td, avals)
    out, aux = _split_aux(res, has_aux, fun)
    out_leaves, out_td = flatten(out)
    aux_leaves, aux_td = flatten(aux)
    g = b.build([to_atom(x) for x in out_leaves + aux_leaves])
    g = _forward(g, {}, {})
    wrt = [i for i, a in enumerate(avals) if a.dtype.kind in "fc"]
    n_out = len(out_leaves)
    seeds = [Var(o.aval) for o in g.outputs[:n_out]]
    gg = vjp_graph(g, wrt, seeds + [None] * len(aux_leaves))
    gg = gg.replace(inputs=gg.inputs + tuple(seeds))
    gg = passes.run(gg, passes.BACKWARD + passes.LOWER)
    compiled = compile_graph(gg, f"vjp_{getattr(fun, '__name__', 'fn')}")
    outs = compiled.fn(*leaves, *[np.zeros(s.aval.shape, s.aval.dtype) for s in seeds])
    primal_out = unflatten(out_td, outs[:n_out])
    ranges = _arg_ranges(td)

    def vjp_fn(ct: Any) -> tuple:
        ct_leaves, ct_td = flatten(ct)
        if ct_td != out_td:
            raise TypeError(f"vjp_fn: cotangent structure {describe(ct_td)} does not match the "
                            f"output structure {describe(out_td)}{_where(user_src())}")
        for c, s in zip(ct_leaves, seeds):
            if np.shape(c) != s.aval.shape:
                raise ValueError(f"vjp_fn: cotangent of shape {np.shape(c)} for an output of "
                                 f"shape {s.aval.shape}{_where(user_src())}")
        r = compiled.fn(*leaves, *[np.asarray(c, s.aval.dtype) for c, s in zip(ct_leaves, seeds)])
        cts = iter(r[len(g.outputs):])
        flat = [next(cts) if a.dtype.kind in "fc" else None for a in avals]
        return tuple(unflatten(td[1][i], flat[r.start:r.stop]) for i, r in enumerate(ranges))
    if has_aux:
        return primal_out, vjp_fn, unflatten(aux_td, outs[n_out:len(g.outputs)])
    return primal_out, vjp_fn

