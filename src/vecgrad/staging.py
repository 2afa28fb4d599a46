"""Staging: one transformation of a function at one call signature, as one graph.

    trace -> forward passes -> AD (and batching over a basis) -> backward passes   = Staged
    Staged -> lowering passes -> backend compile                                    = Entry
    Staged -> inlined into the enclosing trace                        (a nested call)

The passes are declared once, in `vecgrad.pipeline` (FORWARD, BACKWARD, LOWER). A `Staged`
graph's inputs are the call's array leaves, then the values of enclosing traces it reads
(its closure, only when traced inside another trace), then any extra inputs (cotangent or
tangent seeds); its outputs are whatever `finish` turns into the user's result.
"""
from __future__ import annotations

import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import backends, pipeline
from .autodiff import jvp_graph, split_graph, vjp_graph
from .backends import Compiled
from .config import settings
from .errors import (
    ArgumentError,
    CastingError,
    ConcretizationError,
    ShapeError,
    Src,
    TracedIntoNumpyError,
    TraceError,
    VecgradError,
    _where,
    locate_numpy_error,
    traceback_user_src,
    user_src,
)
from .inputs import new_input
from .ir import Const, Graph, Var
from .numpy._buffers import numpy_buffers, raising_modules
from .pybuiltins import returned, traced_builtins
from .pytree import flatten, unflatten
from .randomness import checked_trace
from .signature import ARRAY, Call, unflatten_call
from .tracing import Builder, Tracer, current_builder, to_atom
from .weak import WeakScalar, asks_type


class NeedStatic(Exception):
    """The trace needed the value of Python-number arguments (`positions`, holding `leaves`):
    trace again with them static. `error` is what the function raised; `certain` is False
    when the error could not be traced back to the arguments' values (a guess, to be kept
    only if the next trace succeeds)."""

    def __init__(self, positions: set, leaves: set, error: BaseException, certain: bool):
        super().__init__(str(error))
        self.positions, self.leaves, self.error = positions, leaves, error
        self.certain = certain


# What a function may raise when it used a traced Python number as a value without vecgrad
# seeing it (a dict lookup by it, isinstance(n, int), a library call that converts it).
_MAYBE_CONCRETE = (KeyError, IndexError, TypeError, ConcretizationError, TraceError,
                   TracedIntoNumpyError)


@dataclass
class Staged:
    """A transformation of a function at one signature, as a graph (see the module doc)."""

    graph: Graph
    finish: Callable[[Sequence], Any]
    closure: list[Tracer] = field(default_factory=list)
    extra: int = 0  # trailing seed inputs
    times: dict[str, float] = field(default_factory=dict)
    stages: dict[str, Graph] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Entry:
    """One compiled signature: the generated code, stage timings, the equation count of each
    stage and the batching notes; the final graph (as run), and with `settings.keep_stages`
    the graph at every stage (those of at most `settings.keep_stage_eqns` equations). `slim`
    says that the other stages were dropped (what a cache hit needs is kept)."""

    compiled: Compiled
    finish: Callable[[tuple], Any]
    stages: dict[str, Graph] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    notes: tuple = ()
    slim: bool = False

    def __post_init__(self) -> None:
        self.counts = {k: len(g.eqns) for k, g in self.stages.items()}
        fwd = self.stages.get("scans") or self.stages.get("batch")
        if fwd is not None:  # the notes of batching and of the passes after it
            self.notes = fwd.notes
        kept = _RUN_STAGES if not settings.keep_stages else self.stages
        keep = settings.keep_stage_eqns
        self.slim = not settings.keep_stages
        self.stages = {k: g for k, g in self.stages.items()
                       if k in kept and (k in _RUN_STAGES or len(g.eqns) <= keep)}


_RUN_STAGES = ("final", "forward", "backward")  # the graphs the generated code runs


def fun_src(fun: Callable) -> Src | None:
    """Where `fun` was defined (for errors about it)."""
    fun = getattr(fun, "__wrapped__", fun)
    code = getattr(fun, "__code__", None)
    return Src(code.co_filename, code.co_firstlineno, code.co_name) if code else None


def fun_name(fun: Callable) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


# ----------------------------------------------------------------------------- tracing

@dataclass
class Traced:
    """A traced function after the forward passes: outputs are its result's array leaves,
    then its aux's (has_aux)."""

    graph: Graph
    closure: list[Tracer]
    out_td: Any
    aux_td: Any
    n_out: int
    times: dict[str, float]
    stages: dict[str, Graph]


def trace_call(fun: Callable, call: Call, has_aux: bool = False,
               check: Callable[[Any], Any] | None = None) -> Traced:
    """Trace `fun` on the call's abstract leaves and run the forward passes. `check(out)` may
    validate (and convert) the output before it is flattened. A trace that stored a traced
    value into a NumPy array runs again with np.zeros / np.empty / ... making vecgrad buffers
    (numpy/_buffers.py); if that fails too, the first error stands."""
    return with_numpy_buffers(fun, lambda: _trace_call(fun, call, has_aux, check))


def with_numpy_buffers(fun: Callable, run: Callable[[], Any]) -> Any:
    """run() (a trace of `fun`); where it stores a traced value into a NumPy array, run()
    again with the creation functions of fun's modules, and of the modules of the user's
    frames the store was raised in, making vecgrad buffers (NumPy's ValueError of a store,
    where no typed error replaced it, counts too). A retry that stores into a NumPy array made
    in a module not swapped yet (a call reached only by running) swaps that one too, a few
    times at most. If that fails, the first error stands (but for a retrace with static
    arguments, which goes on, and NumPy's casting error of an in-place operation on a buffer:
    `int_buffer += x`)."""
    try:
        return run()
    except (TracedIntoNumpyError, ValueError) as ex:
        if not _numpy_store(ex):
            raise
        first = ex
    also = raising_modules(first)
    for _ in range(_RETRIES):
        with numpy_buffers(fun, also) as swapped:
            if not swapped:
                raise first
            try:
                return run()
            except NeedStatic:
                raise
            except CastingError:  # (an in-place update of a buffer of NumPy's dtype that
                raise  # NumPy refuses: `int_buffer += x`, NumPy's own error there)
            except (VecgradError, ValueError, TypeError, IndexError) as again:  # (np.arange:
                if _program_error(again):  # a buffer, iterated: traced ints, ...)
                    raise
                new = _new_modules(again, also)
                if not new:
                    raise first from None
                also += new
    raise first


_RETRIES = 4  # (each retry swaps the modules a store was raised in: one per call depth)


def _new_modules(ex: BaseException, known: list[dict]) -> list[dict]:
    """The modules a failed retry's store into a NumPy array was raised in, not swapped yet."""
    if not _numpy_store(ex):
        return []
    return [g for g in raising_modules(ex) if all(g is not h for h in known)]


def _program_error(ex: Exception) -> bool:
    """An error the program raises run by NumPy too, reached once its buffers let the trace
    run past the first store (an index out of bounds, a value of the wrong shape for the
    slot written): the user's own error at the user's line, not the store's. (What the
    buffers themselves may cause, traced ints where NumPy's were, is none of these.)"""
    return isinstance(ex, (IndexError, ShapeError)) and not _numpy_store(ex)


def _numpy_store(ex: Exception) -> bool:
    return isinstance(ex, TracedIntoNumpyError) or "array element with a sequence" in str(ex) \
        and isinstance(ex.__cause__, TracedIntoNumpyError)


def _trace_call(fun: Callable, call: Call, has_aux: bool,
                check: Callable[[Any], Any] | None) -> Traced:
    times: dict[str, float] = {}
    stages: dict[str, Graph] = {}
    t0 = time.perf_counter()
    with Builder(parent=current_builder()) as b:
        tracers = [new_input(a, b) if k is None else _weak_input(a, b, k)
                   for a, k in zip(call.avals, call.weak)]
        args, kwargs = unflatten_call(call.td, tracers)
        _type_of_numbers(fun, call, args, kwargs)
        try:  # (random numbers drawn while tracing raise: see randomness)
            with traced_builtins():  # (Python's max/min of traced 0-d values)
                res = checked_trace(fun, call.td, lambda: fun(*args, **kwargs))
        except Exception as ex:
            _blame(b, call, tracers, ex)
            _blame_numpy_store(b, ex)
            locate_numpy_error(ex)
            raise
        out, aux = split_aux(res, has_aux, fun)
        if check is not None:
            out = check(out)
        out_leaves, out_td = flatten(out)
        aux_leaves, aux_td = flatten(aux)
        _no_escape(out_td, fun)
        _no_escape(aux_td, fun)
        returned(out_leaves + aux_leaves)  # (max(x32[i], 0.0): float32, or a Python float)
        atoms = [to_atom(x, (), b) for x in out_leaves + aux_leaves]
    g = b.build(atoms)
    times["trace"] = time.perf_counter() - t0
    stages["traced"] = stages["cse"] = g  # recorded hash-consed: CSE is done (see pipeline)
    g = pipeline.run(g, pipeline.FORWARD, times, stages)
    return Traced(g, [t for t, _ in b.closure], out_td, aux_td, len(out_leaves), times, stages)


def _no_escape(td: Any, fun: Callable) -> None:
    """A result that holds traced values outside its array leaves (a generator, a function
    closing over them, an object's attribute) would hand them out of the trace, to be
    computed on after it ended: refused, as JAX's jit refuses such results."""
    kind = td[0]
    if kind in ("tuple", "list"):
        for c in td[1]:
            _no_escape(c, fun)
    elif kind == "dict":
        for c in td[2]:
            _no_escape(c, fun)
    elif kind == "static":
        v = td[2]
        if isinstance(v, types.GeneratorType):
            what = "a generator (computed lazily, after the trace ended)"
        elif isinstance(v, types.FunctionType) and any(
                _holds_tracer(_cell(c)) for c in v.__closure__ or ()):
            what = f"the function {v.__name__} that closes over traced values"
        elif not isinstance(v, type) and any(map(_holds_tracer, getattr(v, "__dict__", {})
                                                  .values())):
            what = f"a {type(v).__name__} object whose attributes hold traced values"
        else:
            return
        raise TraceError(f"the traced function returned {what}: return the arrays themselves "
                         "(a pytree of them: tuple, list, dict), and build the function or "
                         "object from the results outside", fun_src(fun))


def _cell(c: Any) -> Any:
    try:
        return c.cell_contents
    except ValueError:  # (an empty cell)
        return None


def _holds_tracer(x: Any, depth: int = 2) -> bool:
    if isinstance(x, Tracer):
        return True
    if depth and isinstance(x, (list, tuple)):
        return any(_holds_tracer(c, depth - 1) for c in x)
    if depth and isinstance(x, dict):
        return any(_holds_tracer(c, depth - 1) for c in x.values())
    return False


def _weak_input(aval: Any, b: Builder, kind: Any) -> WeakScalar:
    v = Var(aval)
    b.inputs.append(v)
    return WeakScalar(b, v, kind)


def _type_of_numbers(fun: Callable, call: Call, args: tuple, kwargs: dict) -> None:
    """Python-number arguments of a function that calls `type(...)` are static (see
    `weak.asks_type`)."""
    weak = [i for i, k in enumerate(call.weak) if k is not None]
    if weak and asks_type(fun, args, kwargs):
        ex = ConcretizationError("type() (a check of the type of a Python number argument)",
                                 fun_src(fun))
        raise NeedStatic({call.position_of(i) for i in weak}, set(weak), ex, True)


def _blame(b: Builder, call: Call, tracers: list, ex: Exception) -> None:
    """After a failed trace: if weak Python-number arguments (or values of enclosing traces)
    were needed concretely, raise NeedStatic naming them (all weak ones when the failure
    cannot be traced back to its values, e.g. a KeyError from a dict lookup)."""
    weak = {t.atom: i for i, t in enumerate(tracers) if call.weak[i] is not None}
    if not weak and not b.closure:
        return
    deps = {a for a in b.concrete if a.__class__ is Var}
    if deps:
        for e in reversed(b.eqns):
            if e.out in deps:
                deps.update(a for a in e.inputs if a.__class__ is Var)
    for outer, v in b.closure:  # the enclosing trace's own values: it decides for them
        if v in deps:
            outer._concrete()
    leaves = {i for v, i in weak.items() if v in deps}
    certain = bool(leaves)
    if not deps and weak and isinstance(ex, _MAYBE_CONCRETE) and not isinstance(ex, ShapeError):
        leaves = set(weak.values())
    if leaves:
        raise NeedStatic({call.position_of(i) for i in leaves}, leaves, ex, certain) from ex


def _blame_numpy_store(b: Builder, ex: Exception) -> None:
    """NumPy turns the typed error of a traced scalar stored into a NumPy array
    (`buf = np.zeros(3); buf[0] = traced`) into "setting an array element with a sequence":
    give the typed error back, at the user's line."""
    if b.concrete and isinstance(ex, ValueError) and not isinstance(ex, VecgradError) \
            and "array element with a sequence" in str(ex):
        raise TracedIntoNumpyError(src=traceback_user_src(ex.__traceback__)) from ex


def split_aux(res: Any, has_aux: bool, fun: Callable) -> tuple[Any, Any]:
    if not has_aux:
        return res, None
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise ArgumentError(f"has_aux=True requires the function to return a pair (out, aux), "
                            f"got {type(res).__name__}{_where(fun_src(fun))}")
    return res[0], res[1]


# -------------------------------------------------------------------- argnums and checks

def norm_argnums(argnums: Any, nargs: int, fun: Callable) -> tuple[int, ...]:
    """argnums as a tuple of non-negative positions, checked against the call."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ArgumentError(f"argnums {argnums!r} is out of range for a call with {nargs} "
                                f"positional argument{'s' * (nargs != 1)} (keyword arguments "
                                f"are never differentiated){fun_where(fun)}")
    return tuple(a % nargs for a in nums)


def check_argnums(argnums: Any) -> None:
    """argnums must be an int or a non-empty sequence of ints (checked when transforming)."""
    ok = isinstance(argnums, int) and not isinstance(argnums, bool) or \
        isinstance(argnums, (tuple, list)) and argnums and \
        all(isinstance(a, int) and not isinstance(a, bool) for a in argnums)
    if not ok:
        raise ArgumentError(f"argnums must be an int or a non-empty tuple of ints, got "
                            f"{argnums!r}{_where(user_src())}")


def fun_where(fun: Callable) -> str:
    """Where the user called a transformation of `fun`, and where `fun` is defined."""
    src = fun_src(fun)
    defined = f"; {src.func} is defined at {src.file}:{src.line}" if src else ""
    return _where(user_src()) + defined


def wrt_leaves(call: Call, nums: tuple[int, ...], fun: Callable, what: str) -> list[int]:
    """The leaves to differentiate (each once), checked to be floating point. As JAX's,
    integer and bool leaves are refused, also a Python int inside a container (which
    vecgrad keeps static), naming where in the argument they are."""
    wrt: dict[int, None] = {}
    for a in nums:
        for path, node in _leaf_paths(call.td[0][a]):
            if node is not None and node[1] is not int:
                raise ArgumentError(f"{what} cannot differentiate argument {a}{path}, the Python "
                                    f"{node[1].__name__} {node[2]!r}: the function uses its "
                                    f"value as a Python number (an `if`, a `range`, a shape or "
                                    f"an index), so it is static. Pass it in an argument that "
                                    f"is not differentiated (or through a closure), or use it "
                                    f"through array operations only (np.where instead of "
                                    f"`if`){fun_where(fun)}")
        if not call.ranges[a]:
            raise ArgumentError(f"argument {a} is static (it holds no array), so it cannot "
                                f"be differentiated: pass a NumPy float array "
                                f"(np.asarray(x, float)){fun_where(fun)}")
        paths = _leaf_paths(call.td[0][a])
        for i, path in zip(call.ranges[a], (p for p, node in paths if node is None)):
            dt = call.avals[i].dtype
            if dt.kind != "f" and not (dt.kind == "c" and what == "grad"):
                py = " (a Python int: pass a float, such as 3.0)" if type(call.weak[i]) is int else ""
                raise ArgumentError(f"{what} requires floating-point inputs, but argument "
                                    f"{a}{path} has an array of dtype {dt}{py}: convert it "
                                    f"with x.astype(np.float64), or leave it out of argnums"
                                    f"{fun_where(fun)}")
            wrt[i] = None
        for path, node in paths:
            if node is not None and node[1] is int:
                raise ArgumentError(f"{what} requires floating-point inputs, but argument "
                                    f"{a}{path} is the Python int {node[2]!r} (numbers inside "
                                    f"a container are static: vecgrad would give no "
                                    f"gradient): pass a float, such as {float(node[2])!r}, "
                                    f"or move it out of the differentiated arguments"
                                    f"{fun_where(fun)}")
    return list(wrt)


def _leaf_paths(td: Any, path: str = "") -> list[tuple[str, Any]]:
    """(where, None) for each array leaf of an argument's treedef in order, and (where, node)
    for each static number in it ('' at the top, else as `["w"][0]`)."""
    kind = td[0]
    if kind in ("*", "weak"):
        return [(path, None)]
    if kind in ("tuple", "list"):
        return [q for k, c in enumerate(td[1]) for q in _leaf_paths(c, f"{path}[{k}]")]
    if kind == "dict":
        return [q for k, c in zip(td[1], td[2]) for q in _leaf_paths(c, f"{path}[{k!r}]")]
    if kind == "static" and td[1] in (int, float, complex):
        return [(path, td)]
    return []


def real_scalar_out(fun: Callable) -> Callable[[Any], Any]:
    def check(out: Any) -> Any:
        if isinstance(out, Tracer):
            if out.shape != ():  # point at the line that computed the output
                src = next((e.src for e in reversed(out._b.eqns) if e.out is out.atom), None)
                raise ArgumentError(
                    f"grad requires a scalar output, but the function returned an array of "
                    f"shape {out.shape}{_where(src or fun_src(fun))}. Reduce it first (e.g. "
                    "`.sum()`), or use vg.vjp or vg.jacobian for non-scalar outputs.")
            dt = out.dtype
        else:  # (a container of tracers cannot become an array: said so, not by NumPy)
            arr = None if isinstance(out, (list, tuple, dict)) else np.asarray(out)
            if arr is None or arr.shape != () or arr.dtype.kind not in "fciub":
                pair = isinstance(out, tuple) and len(out) == 2
                raise ArgumentError(f"grad requires a scalar output, got {type(out).__name__}"
                                    f"{_where(fun_src(fun))}" + (
                                        ": to return (value, aux), pass has_aux=True" if pair
                                        else ": for several outputs, use vg.jacobian or vg.vjp"
                                        if arr is None else ""))
            out, dt = arr, arr.dtype
        if dt.kind == "c":  # as JAX: never silently the real part's gradient
            raise ArgumentError(f"grad requires a real-valued output, got {dt}"
                                f"{_where(fun_src(fun))}. Differentiate a real function of it "
                                "(vnp.abs(out) ** 2, vnp.real(out)), or use vg.vjp with a "
                                "complex cotangent.")
        if dt.kind != "f":
            raise ArgumentError(f"grad requires a floating-point output, got {dt}"
                                f"{_where(fun_src(fun))}")
        return out
    return check


def grad_tree(td: Any, leaves: Sequence, ranges: range, pos: dict[int, int]) -> Any:
    """An argument's gradient: its structure, with the gradient of each array leaf and None
    for static parts."""
    it = iter(leaves[pos[i]] if i in pos else None for i in ranges)
    return _tree(td, it)


def _tree(td: Any, it: Any) -> Any:
    kind = td[0]
    if kind in ("*", "weak"):
        return next(it)
    if kind in ("tuple", "list"):
        xs = [_tree(c, it) for c in td[1]]
        if kind == "list":
            return xs
        return td[2](*xs) if len(td) > 2 else tuple(xs)  # (a NamedTuple: its own type)
    if kind == "dict":
        return {k: _tree(c, it) for k, c in zip(td[1], td[2])}
    return None


# ------------------------------------------------------------------------ the stagings

def _backward(g: Graph, times: dict, stages: dict) -> Graph:
    return pipeline.run(g, pipeline.backward(), times, stages)


def stage_jit(fun: Callable, call: Call) -> Staged:
    """The forward of `fun`: its result's leaves."""
    tr = trace_call(fun, call)
    g, out_td = tr.graph, tr.out_td  # (finish closes over what it needs: not the trace)
    return Staged(g, lambda outs: unflatten(out_td, outs), tr.closure, 0, tr.times,
                  tr.stages, {"out_td": out_td})


def stage_grad(fun: Callable, call: Call, argnums: Any, has_aux: bool, value: bool) -> Staged:
    """grad / value_and_grad: outputs are the value, the aux leaves, then one gradient per
    differentiated leaf."""
    nums = norm_argnums(argnums, call.nargs, fun)
    wrt = wrt_leaves(call, nums, fun, "grad")
    tr = trace_call(fun, call, has_aux, real_scalar_out(fun))
    g, times, stages, aux_td = tr.graph, tr.times, tr.stages, tr.aux_td
    n_aux = len(g.outputs) - 1
    t0 = time.perf_counter()
    gg = vjp_graph(g, wrt, [Const(np.ones((), g.outputs[0].aval.dtype))] + [None] * n_aux)
    times["ad"] = time.perf_counter() - t0
    stages["grad"] = gg
    gg = _backward(gg, times, stages)
    pos = {leaf: 1 + n_aux + k for k, leaf in enumerate(wrt)}
    single = isinstance(argnums, int)
    plain = [pos[call.ranges[a][0]] if call.td[0][a] == ARRAY else None for a in nums]

    def finish(outs: Sequence) -> Any:
        grads = tuple(outs[k] if k is not None else  # (an array argument: its gradient)
                      grad_tree(call.td[0][a], outs, call.ranges[a], pos)
                      for a, k in zip(nums, plain))
        grads = grads[0] if single else grads
        val = outs[0]
        if has_aux:
            aux = unflatten(aux_td, outs[1:1 + n_aux])
            return ((val, aux), grads) if value else (grads, aux)
        return (val, grads) if value else grads
    return Staged(gg, finish, tr.closure, 0, times, stages,
                  {"forward_vars": frozenset(e.out for e in g.eqns), "wrt": wrt,
                   "primal_outputs": 1 + n_aux, "call": call})


def stage_vjp(fun: Callable, call: Call, has_aux: bool) -> Staged:
    """vjp: inputs are the leaves, the closure, then one cotangent per output leaf; outputs
    are the result's leaves, the aux's, then one cotangent per float array leaf of the
    arguments and per Python float (as JAX's; ints and non-float leaves get none:
    `meta['wrt']`)."""
    tr = trace_call(fun, call, has_aux)
    g, times, stages = tr.graph, tr.times, tr.stages
    n_out = tr.n_out
    wrt = [i for i, a in enumerate(call.avals) if a.dtype.kind in "fc"]
    seeds = [Var(o.aval) for o in g.outputs[:n_out]]
    t0 = time.perf_counter()
    gg = vjp_graph(g, wrt, seeds + [None] * (len(g.outputs) - n_out))
    gg = gg.replace(inputs=gg.inputs + tuple(seeds))
    times["ad"] = time.perf_counter() - t0
    gg = _backward(gg, times, stages)
    meta = {"wrt": wrt, "n_out": n_out, "n_fwd": len(g.outputs), "out_td": tr.out_td,
            "aux_td": tr.aux_td, "seeds": [s.aval for s in seeds], "call": call}
    return Staged(gg, lambda outs: outs, tr.closure, n_out, times, stages, meta)


def stage_jvp(fun: Callable, call: Call) -> Staged:
    """jvp: inputs are the leaves, the closure, then one tangent per differentiable leaf
    (`meta['wrt']`: float array leaves and Python floats); outputs are the result's leaves,
    then their tangents."""
    tr = trace_call(fun, call)
    g, times, stages = tr.graph, tr.times, tr.stages
    wrt = [i for i, a in enumerate(call.avals) if a.dtype.kind in "fc"]
    t0 = time.perf_counter()
    gj = jvp_graph(g, wrt)
    times["ad"] = time.perf_counter() - t0
    gj = _backward(gj, times, stages)
    return Staged(gj, lambda outs: outs, tr.closure, len(wrt), times, stages,
                  {"wrt": wrt, "n_out": tr.n_out, "out_td": tr.out_td, "call": call})


# ------------------------------------------------------------------------ compiling

def lower_passes(backend: backends.Backend) -> tuple[pipeline.Stage, ...]:
    """The LOWER passes that apply to a backend (NumPy's measured relayout, for one)."""
    return pipeline.lowering(backend.lower_passes)


def compile_staged(st: Staged, name: str, backend: str | None = None) -> Entry:
    """Lower and compile a staged graph (at top level: it reads no enclosing trace) for a
    backend (default: settings.backend)."""
    be = backends.get(backend or settings.backend)
    times, stages = dict(st.times), dict(st.stages)
    g = pipeline.run(st.graph, lower_passes(be), times, stages)
    stages["final"] = g
    t0 = time.perf_counter()
    compiled = be.compile(g, name)
    times["codegen"] = time.perf_counter() - t0
    return Entry(compiled, st.finish, stages, times, st.meta)


def compile_split(st: Staged, name: str, n_fwd: int, backend: str | None = None) -> Entry:
    """Lower a staged graph with seed inputs and compile it as two programs: the forward
    (leaves -> its first n_fwd outputs, then residuals), as `compiled`, and the backward
    (residuals, then seeds -> the other outputs), as `meta['backward']`."""
    be = backends.get(backend or settings.backend)
    times, stages = dict(st.times), dict(st.stages)
    g = pipeline.run(st.graph, lower_passes(be), times, stages)
    stages["final"] = g
    t0 = time.perf_counter()
    fwd, bwd = split_graph(g, len(g.inputs) - st.extra, n_fwd)
    stages["forward"], stages["backward"] = fwd, bwd
    compiled = be.compile(fwd, name + "_fwd")
    meta = dict(st.meta, backward=be.compile(bwd, name + "_bwd"), n_fwd=n_fwd)
    times["codegen"] = time.perf_counter() - t0
    return Entry(compiled, st.finish, stages, times, meta)
