"""The public transformations: jit, grad, value_and_grad, jacrev, jacfwd, jacobian, hessian
(vjp, jvp, linearize and hvp, which hand back functions of cotangents or tangents, are in
linear_maps.py); and the compile cache (clear_cache).

Each transformed function is staged and compiled once per call signature (see signature.py:
the pytree structure, the shapes and dtypes of the array leaves, and the values of static
leaves) and cached per function; a cache hit flattens the arguments, looks the signature up,
and calls the generated code. Called on traced values, inside another transformation, a
transformed function is not compiled: its staged graph (already batched, simplified and
differentiated) is inlined into the enclosing trace, whose passes then batch and simplify it
again, and whose AD differentiates it (grad of grad, Hessians, Jacobians of gradients).
"""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import inspect
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import backends, compile_cache
from .config import settings
from .custom import _bwd_graph
from .errors import ArgumentError, _where, user_src
from .inputs import new_input
from .interpret import inline
from .ir import Graph
from .jacobians import stage_jac
from .pybuiltins import traced_builtins
from .pytree import flatten, is_leaf
from .signature import (
    ARRAY,
    Call,
    array_call,
    clear_memo,
    flatten_call,
    positional_call,
    unflatten_call,
)
from .staging import (
    Entry,
    NeedStatic,
    Staged,
    check_argnums,
    compile_staged,
    fun_name,
    stage_grad,
    stage_jit,
    with_numpy_buffers,
)
from .tracing import Builder, Tracer, current_builder, to_atom

__all__ = ["Entry", "Transformed", "clear_cache", "grad", "hessian", "jacfwd", "jacobian",
           "jacrev", "jit", "value_and_grad"]


# ------------------------------------------------------------------------------ the cache

class FunCache:
    """A function's compiled entries (and staged graphs, for nested calls), keyed by
    (transformation chain, treedef, signature), and the positions of its Python-number
    arguments that its trace needed as values (these are static from then on)."""

    __slots__ = ("__weakref__", "entries", "static")

    def __init__(self) -> None:
        self.entries: dict[tuple, Any] = {}
        self.static: frozenset = frozenset()

    def __len__(self) -> int:
        return len(self.entries)

    def put(self, key: tuple, value: Any) -> None:
        """Store an entry (beyond settings.cache_size entries or settings.cache_bytes bytes in
        all functions' caches, the least recently used are dropped: see compile_cache)."""
        if isinstance(value, Staged) and value.stages and not settings.keep_stages:
            value = dataclasses.replace(value, stages={})  # (a nested call needs its graph)
        self.entries[key] = value
        compile_cache.added(self, key, value)


_used = compile_cache.touch  # (a cache hit's one bookkeeping call)
_CACHE: weakref.WeakKeyDictionary[Callable, FunCache] = weakref.WeakKeyDictionary()
_STRONG: dict[int, tuple[Callable, FunCache]] = {}  # functions without weak references


def fun_cache(fun: Callable) -> FunCache:
    """The cache of `fun` (shared by every transformation of it)."""
    try:
        c = _CACHE.get(fun)
        if c is None:
            c = _CACHE[fun] = FunCache()
        return c
    except TypeError:  # not weak-referenceable (or unhashable): kept until clear_cache
        hit = _STRONG.get(id(fun))
        if hit is None or hit[0] is not fun:
            hit = _STRONG[id(fun)] = (fun, FunCache())
        return hit[1]


def clear_cache() -> None:
    """Drop every compiled function, staged graph and remembered static argument, so that
    the next call of any transformed function traces it again (for instance after changing
    a global that a traced function reads: globals are read once, while tracing, as in
    `jax.jit`)."""
    for c in list(_CACHE.values()) + [c for _, c in _STRONG.values()]:
        c.entries.clear()
        c.static = frozenset()
    _STRONG.clear()
    compile_cache.clear()
    clear_memo()
    _bwd_graph.cache_clear()


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


def _signature(cache: FunCache, args: tuple, kwargs: dict, deep: frozenset = frozenset()
               ) -> tuple[list, Any, tuple]:
    if not kwargs and all(type(x) is np.ndarray for x in args):  # the common call, quickly
        return array_call(args)
    return flatten_call(args, kwargs, cache.static, settings.trace_scalars, deep)


def _build(cache: FunCache, key_head: tuple, args: tuple, kwargs: dict,
           build: Callable[[Call], Any], store: Callable[[Any], bool] = lambda e: True,
           deep: frozenset = frozenset()) -> tuple[Any, list]:
    """The cached value for this call (building it on a miss) and the call's leaves. A trace
    that needed the value of Python-number arguments makes them static and traces again.
    `deep`: the differentiated positions (their containers' Python floats are traced)."""
    known = cache.static  # (restored if a guess about which arguments are static fails)
    while True:
        leaves, td, sig = _signature(cache, args, kwargs, deep)
        key = (key_head, td, sig)
        e = cache.entries.get(key)
        if e is not None and not (settings.keep_stages and getattr(e, "slim", False)):
            compile_cache.used(e)
            return e, leaves
        try:
            with _gc_paused():
                e = build(Call(td, sig))
        except NeedStatic as ns:
            traced = [leaves[i] for i in ns.leaves if isinstance(leaves[i], Tracer)]
            for t in traced:  # a value of the enclosing trace: it must be static there
                t._concrete()
            if traced or ns.positions <= cache.static:
                raise ns.error from None
            cache.static = cache.static | ns.positions
            known = cache.static if ns.certain else known
            continue
        except BaseException:
            cache.static = known
            raise
        if store(e):
            cache.put(key, e)
        return e, leaves


def _base(fun: Callable) -> tuple[Callable, tuple]:
    """The user's function under a stack of transformations, and the stack's options."""
    if isinstance(fun, Transformed):
        return fun._base, fun._chain
    return fun, ()


def _check_fun(fun: Any, what: str) -> None:
    if not callable(fun):
        raise ArgumentError(f"{what} expects a function, got {type(fun).__name__}"
                            f"{_where(user_src())}")


# ------------------------------------------------------------------------ Transformed

class Transformed:
    """A function transformed by jit, grad, value_and_grad, jacrev, jacfwd (or a stack of
    them), with a cache per call signature. Call it like the function: positional and keyword
    arguments, pytrees of arrays; keyword arguments are never differentiated."""

    def __init__(self, fun: Callable, kind: str, argnums: Any = 0, has_aux: bool = False,
                 backend: str | None = None, static: frozenset = frozenset()):
        _check_fun(fun, f"vg.{kind}")
        if backend is not None:
            backends.get(backend)  # a typed error now for an unknown or missing backend
        if kind != "jit":
            check_argnums(argnums)
            if not isinstance(has_aux, bool):
                raise ArgumentError(f"has_aux must be True or False, got {has_aux!r}"
                                    f"{_where(user_src())}")
        self.fun, self.kind, self.argnums, self.has_aux = fun, kind, argnums, has_aux
        self.__wrapped__ = fun
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__name__ = fun_name(fun)
        self._opts = (kind, argnums if isinstance(argnums, int) else tuple(argnums), has_aux)
        base, chain = _base(fun)
        self._base, self._chain = base, (self._opts,) + chain
        self._cache = fun_cache(base)
        self._static = static  # jit's static_argnums (ints) and static_argnames (strs)
        self.backend = backend  # None: settings.backend, when called

    def __repr__(self) -> str:
        return f"<vecgrad {self.kind} of {self.__name__}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """A transformed function defined in a class body and called as a method: `self` is
        no array, and keying the compile by the object's identity would miss any later
        change of its attributes (a silent stale result), so the call is refused with what
        to do instead (as jax.jit refuses a `self` that is not a JAX type)."""
        if obj is None:
            return self

        def method(*args: Any, **kwargs: Any) -> Any:
            raise ArgumentError(
                f"vg.{self.kind} of {self.__name__} called as a method of a "
                f"{type(obj).__name__} object{_where(user_src())}: `self` is not an array, "
                "and vecgrad would key the compile by the object itself, missing later "
                "changes of its attributes. Transform a function of the arrays instead "
                f"(vg.{self.kind}(lambda w, x: ...)(self.w, x)), or make it a @staticmethod")
        return method

    def _stage(self, call: Call) -> Staged:
        k = self.kind
        if k == "jit":
            return stage_jit(self.fun, call)
        if k in ("grad", "value_and_grad"):
            return stage_grad(self.fun, call, self.argnums, self.has_aux, k == "value_and_grad")
        return stage_jac(self.fun, call, self.argnums, self.has_aux, k[3:])

    def _head(self) -> tuple:
        """The cache key's head: the transformation chain and the backend."""
        return self._chain + (self.backend or settings.backend,)

    def entry(self, *args: Any, **kwargs: Any) -> tuple[Entry, list]:
        """The compiled entry for these arguments (compiling on a miss) and the leaves that
        its generated code takes."""
        head = self._head()
        self._mark_static(args, kwargs)
        return _build(self._cache, head, args, kwargs, lambda call: compile_staged(
            self._stage(call), f"{self.kind}_{self.__name__}", head[-1]),
            deep=self._deep(len(args)))

    def _deep(self, nargs: int) -> frozenset:
        """The positions differentiated (none for jit; out-of-range argnums are refused by
        the staging, which names them)."""
        if self.kind == "jit":
            return frozenset()
        nums = (self.argnums,) if isinstance(self.argnums, int) else self.argnums
        return frozenset(a % nargs for a in nums if -nargs <= a < nargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if current_builder() is not None:
            return self._nested(args, kwargs)
        cache, head = self._cache, self._head()
        # the common call (arrays only), with as few Python calls as possible (keyword
        # arguments, even with no positional one, take the general path; arrays with
        # Python floats a shorter one)
        for x in (None,) if kwargs else args:
            if type(x) is not np.ndarray:
                quick = None if kwargs else positional_call(args, cache.static,
                                                            settings.trace_scalars)
                leaves, td, sig = quick or flatten_call(
                    args, kwargs, cache.static, settings.trace_scalars, self._deep(len(args)))
                e = cache.entries.get((head, td, sig))
                if e is None:
                    e, leaves = self.entry(*args, **kwargs)
                break
        else:
            e = cache.entries.get((head, ((ARRAY,) * len(args), None),
                                   tuple([(x.shape, x.dtype) for x in args])))
            if e is None:
                e, _ = self.entry(*args)
            leaves = args
        _used(id(e))
        return e.finish(e.compiled.fn(*leaves))

    def _mark_static(self, args: tuple, kwargs: dict) -> None:
        """Arguments named static are keyed by value from the first call (a compile: every
        new signature comes here), as jax.jit's; an array cannot be one."""
        if not self._static:
            return
        for k in self._static:
            x = kwargs.get(k) if isinstance(k, str) else args[k] if k < len(args) else None
            if isinstance(x, Tracer) or is_leaf(x):
                raise ArgumentError(
                    f"argument {k!r} of {self.__name__} is marked static (static_argnums/"
                    f"static_argnames) but is an array{_where(user_src())}: static arguments "
                    "are part of the cache key, compared by value, so they must be hashable "
                    "Python values (numbers, strings, tuples). Pass the array as a traced "
                    "argument instead.")
        self._cache.static = self._cache.static | self._static

    def _nested(self, args: tuple, kwargs: dict) -> Any:
        """Called inside a trace: inline the staged graph into it."""
        self._mark_static(args, kwargs)
        st, leaves = _build(self._cache, ("staged",) + self._chain, args, kwargs, self._stage,
                            lambda st: not st.closure, self._deep(len(args)))
        return st.finish(_inline(st, leaves))


def _inline(st: Staged, leaves: Sequence, extra: Sequence = ()) -> list[Tracer]:
    b = current_builder()
    atoms = [to_atom(x, (), b) for x in list(leaves) + list(st.closure) + list(extra)]
    return [Tracer(b, a) for a in inline(st.graph, atoms)]


def jit(fun: Callable, backend: str | None = None, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Transformed:
    """Compile `fun` (traced once per input signature) into straight-line NumPy code.

    Arguments are pytrees of NumPy arrays; other values are static (part of the cache key),
    except Python numbers passed directly as arguments, which are traced (see
    `vg.config(trace_scalars=...)`). Called inside another transformation, `fun`'s graph is
    inlined into it. `backend` ("numpy", "jax" or "torch"; default `vg.config().backend`)
    runs the compiled code there: on "jax" and "torch", inputs may be that library's arrays
    (or NumPy arrays) on any device, and outputs are its arrays, on the inputs' device.
    `static_argnums` / `static_argnames` (as jax.jit's; a negative position counts from the
    end of `fun`'s positional parameters) make those arguments static from the first call: a Python number there is keyed by its value instead of traced (vecgrad also
    finds this by itself when the function needs the value: a `range`, a shape, an `if`)."""
    return Transformed(fun, "jit", backend=backend,
                       static=_static_set(fun, static_argnums, static_argnames))


def _static_set(fun: Callable, nums: Any, names: Any) -> frozenset:
    nums = (nums,) if not isinstance(nums, (tuple, list)) else tuple(nums)
    names = (names,) if not isinstance(names, (tuple, list)) else tuple(names)
    params = _positional_names(fun)
    # a negative position counts from the end of fun's positional parameters, as in jax.jit
    nums = tuple(k + len(params) if type(k) is int and -len(params) <= k < 0 else k
                 for k in nums)
    if not all(type(k) is int and k >= 0 for k in nums) or not all(
            isinstance(k, str) for k in names):
        raise ArgumentError(f"static_argnums must be ints (negative ones within the "
                            f"{len(params)} positional parameters of the function) and "
                            f"static_argnames strings, got {nums!r} and {names!r}"
                            f"{_where(user_src(3))}")
    _check_static(fun, nums, names, params)
    # a name that is also a position (and the reverse) is static either way, as in jax.jit
    nums += tuple(params.index(k) for k in names if k in params)
    names += tuple(params[k] for k in nums if k < len(params))
    return frozenset(nums) | frozenset(names)


def _check_static(fun: Callable, nums: tuple, names: tuple, params: list[str]) -> None:
    """As jax.jit: a static position the function cannot take, or a static name that is
    none of its parameters, is an error (it was ignored: the argument stayed traced)."""
    try:
        ps = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return
    kinds = {p.kind for p in ps}
    bad = [k for k in nums if k >= len(params)] if inspect.Parameter.VAR_POSITIONAL not in \
        kinds else []
    named = {p.name for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    bad_names = [k for k in names if k not in named] if inspect.Parameter.VAR_KEYWORD not in \
        kinds else []
    if bad or bad_names:
        what = f"static_argnums={tuple(bad)}" if bad else f"static_argnames={tuple(bad_names)}"
        raise ArgumentError(f"vg.jit: {what} names no parameter of {fun_name(fun)}, which "
                            f"takes {len(params)} positional parameter"
                            f"{'s' * (len(params) != 1)} ({', '.join(params) or 'none'})"
                            f"{_where(user_src(3))}")


def _positional_names(fun: Callable) -> list[str]:
    try:
        ps = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):  # (builtins and some callables have no signature)
        return []
    return [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def jit_as(fun: Callable, base: Callable, tag: tuple) -> Transformed:
    """`jit(fun)` for a wrapper `fun` of `base` that `tag` (hashable) defines, such as vmap's
    axes: its entries live in base's cache under that tag, so wrapping base again the same
    way (a `vg.vmap(f)` inside a training loop) compiles nothing new."""
    t = jit(fun)
    t._base, t._cache, t._chain = base, fun_cache(base), (tag,) + t._chain
    return t


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         backend: str | None = None) -> Transformed:
    """Gradient of a real scalar-valued `fun` with respect to the arguments `argnums`.

    Like `jax.grad`: arguments are pytrees of NumPy arrays; the result has the structure of
    the differentiated argument (a tuple of them when `argnums` is a tuple; a position listed
    twice gets its gradient twice). With `has_aux=True`, `fun` returns `(out, aux)` and the
    result is `(grads, aux)`. Keyword arguments are passed through, never differentiated.
    Composes: `grad(grad(f))`, `jacobian(grad(f))`, `grad` inside a `jit`-ed function.
    `backend` as in `jit`."""
    return Transformed(fun, "grad", argnums, has_aux, backend)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, backend: str | None = None) -> Transformed:
    """Like `grad`, but returns `(value, grads)` (or `((value, aux), grads)`)."""
    return Transformed(fun, "value_and_grad", argnums, has_aux, backend)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False
           ) -> Transformed:
    """The Jacobian of `fun` by reverse mode, as `jax.jacrev`: for each output leaf, an array
    of shape `out.shape + in.shape` per differentiated argument leaf (structured like the
    output, then like the argument; a tuple over `argnums` when it is a tuple). Computed as
    one VJP batched over the basis of output cotangents (one compiled call, not one per
    row); cheaper than jacfwd when the output is smaller than the input."""
    return Transformed(fun, "jacrev", argnums, has_aux)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False
           ) -> Transformed:
    """The Jacobian of `fun` by forward mode, as `jax.jacfwd` (same result structure as
    `jacrev`): one JVP batched over the basis of input tangents; cheaper than jacrev when the
    input is smaller than the output."""
    return Transformed(fun, "jacfwd", argnums, has_aux)


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False
            ) -> Transformed:
    """The Hessian of a scalar `fun`, as `jax.hessian`: `jacfwd(jacrev(fun))`, each block of
    shape `x.shape + y.shape`."""
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)


def trace_graph(fun: Callable, args: tuple, hash_cons: bool = True,
                call: Call | None = None) -> Graph:
    """The traced (unbatched, unoptimized) graph of `fun` on `args`, whose outputs are the
    array leaves of its result; with `hash_cons=False`, repeated operations stay repeated.
    With `call` (a compiled entry's `meta["call"]`), its inputs are that entry's leaves
    (traced Python numbers and static arguments as the transformation saw them)."""
    if call is None:
        _, td, sig = flatten_call(tuple(args), {}, frozenset(), False)
        call = Call(td, sig)
    def run() -> Graph:
        with _gc_paused(), Builder(hash_cons=hash_cons) as b:
            a, kw = unflatten_call(call.td, [new_input(v, b) for v in call.avals])
            with traced_builtins():
                res = fun(*a, **kw)
            atoms = [to_atom(x) for x in flatten(res)[0]]
        return b.build(atoms)
    return with_numpy_buffers(fun, run)  # (np.zeros buffers, as staging's trace)


