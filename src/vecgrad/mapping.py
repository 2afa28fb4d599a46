"""`vg.vmap`: a function mapped over an axis of its arguments, with jax.vmap's conventions.

The function is traced once, on one instance's shapes (its own loops are batched by the
forward passes like any traced code), and that graph is emitted for all instances at once
through every primitive's batching rule (`interpret.vmap`, the same interpreter that makes a
Jacobian one batched computation). So a mapped call costs one trace however many instances
it maps, and its gradient is that of the batched graph. Called outside a trace, the mapped
function is compiled with `vg.jit` (once per signature, as any jitted function).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from . import numpy as vnp
from .api import _check_fun, jit_as
from .errors import ArgumentError, _where, user_src
from .interpret import vmap as vmap_graph
from .pytree import flat, unflatten
from .signature import Call, flatten_call
from .staging import fun_src, trace_call
from .tracing import Tracer, current_builder, to_atom

__all__ = ["vmap"]


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None) -> Callable:
    """Map `fun` over an axis of its arguments, as `jax.vmap`: `vmap(f)(xs)` is
    `stack([f(x) for x in xs])`, computed as one batched program.

    - `in_axes`: an int (the mapped axis of every argument's arrays), None (not mapped), or
      a tuple with one entry per positional argument, each an int, None, or a pytree prefix
      of that argument (a list, tuple or dict of ints and Nones). Negative axes count from
      the end. Keyword arguments are mapped over their axis 0, as in JAX.
    - `out_axes`: where the mapped axis goes in each output (an int, or a pytree prefix of
      the result); None only for outputs that do not depend on a mapped input.
    - `axis_size`: the number of instances, needed only when no argument is mapped.

    Works on NumPy arrays (compiled with `vg.jit`) and inside `vg.jit`/`vg.grad`/... (the
    mapped graph becomes part of the enclosing trace, and is differentiated with it). The
    returned function's `compiled` attribute is that `vg.jit` (for `.entry(*args)`)."""
    _check_fun(fun, "vg.vmap")
    _check_spec(in_axes, "in_axes", top=True)
    _check_spec(out_axes, "out_axes", top=False)
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ArgumentError(f"vg.vmap: axis_size must be a non-negative int, got "
                            f"{axis_size!r}{_where(user_src())}")

    @functools.wraps(fun)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        if current_builder() is None:
            return compiled(*args, **kwargs)
        return _mapped_call(fun, in_axes, out_axes, axis_size, args, kwargs)

    compiled = jit_as(mapped, fun, ("vmap", repr(in_axes), repr(out_axes), axis_size))
    mapped.compiled = compiled  # type: ignore[attr-defined]  (its compiled entries)
    return mapped


def _check_spec(spec: Any, what: str, top: bool) -> None:
    if spec is None or type(spec) is int:
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_spec(s, what, False)
        return
    if isinstance(spec, dict):
        for s in spec.values():
            _check_spec(s, what, False)
        return
    raise ArgumentError(f"vg.vmap: {what} must be an int, None, or a tuple/list/dict of them"
                        f"{' (one entry per positional argument)' if top else ''}, got "
                        f"{spec!r}{_where(user_src(3))}")


def _leaf_axes(spec: Any, x: Any, what: str) -> list[int | None]:
    """The axis of each array leaf of `x` (in pytree.flat's order), from a pytree prefix."""
    if type(spec) is int and type(x) in (int, float, complex):
        raise ArgumentError(f"vg.vmap: {what} asks to map axis {spec} of the Python number "
                            f"{x!r}, which has no axes: give it None in {what}"
                            f"{_where(user_src(4))}")
    if spec is None or type(spec) is int:
        leaves: list = []
        flat(x, leaves)
        return [spec] * len(leaves)
    if isinstance(spec, (tuple, list)) and isinstance(x, (tuple, list)) and len(spec) == len(x):
        return [a for s, c in zip(spec, x) for a in _leaf_axes(s, c, what)]
    if isinstance(spec, dict) and isinstance(x, dict) and set(spec) == set(x):
        return [a for k in sorted(x, key=repr) for a in _leaf_axes(spec[k], x[k], what)]
    raise ArgumentError(f"vg.vmap: {what} {spec!r} does not match the structure of the "
                        f"argument (a {type(x).__name__}): give an int or None for all its "
                        f"arrays, or a container of the same structure{_where(user_src(4))}")


def _mapped_call(fun: Callable, in_axes: Any, out_axes: Any, axis_size: int | None,
                 args: tuple, kwargs: dict) -> Any:
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != len(args):
            raise ArgumentError(f"vg.vmap: in_axes has {len(in_axes)} entries but the function "
                                f"was called with {len(args)} positional arguments"
                                f"{_where(user_src(3))}")
        specs = list(in_axes)
    else:
        specs = [in_axes] * len(args)
    keys = sorted(kwargs)
    # (a Python number passed to the jitted mapped function is a weak tracer: it stays weak
    # in the function, as the number itself would: x32 * lr is float32)
    leaves, td, _ = flatten_call(args, kwargs, trace_scalars=False)
    axes = [a for s, x in zip(specs, args) for a in _leaf_axes(s, x, "in_axes")]
    axes += [a for k in keys for a in _leaf_axes(0, kwargs[k], "in_axes")]
    b = current_builder()
    tracers = [x if isinstance(x, Tracer) else Tracer(b, to_atom(x, (), b)) for x in leaves]
    axes = [_axis(ax, t.ndim, "in_axes", t.shape) for ax, t in zip(axes, tracers)]
    n = _size(tracers, axes, axis_size)
    ins = [(vnp.moveaxis(t, ax, 0) if ax else t, ax is not None) for t, ax in zip(tracers, axes)]
    sig = tuple([(t.shape[1:] if m else t.shape, t.dtype) for t, m in ins])
    tr = trace_call(fun, Call(td, sig))
    atoms = [(t.atom, m) for t, m in ins] + [(to_atom(c, (), b), False) for c in tr.closure]
    outs = [_Out(Tracer(b, a), m) for a, m in vmap_graph(tr.graph, n, atoms)]
    return _move_out(unflatten(tr.out_td, outs), out_axes, n, fun)


class _Out(NamedTuple):
    """An output leaf of the mapped graph, and whether a mapped input reaches it."""

    t: Tracer
    mapped: bool


def _axis(ax: int | None, ndim: int, what: str, shape: tuple) -> int | None:
    if ax is None:
        return None
    if not -ndim <= ax < ndim:
        raise ArgumentError(f"vg.vmap: {what} asks to map axis {ax} of an array of shape "
                            f"{shape} (rank {ndim}){_where(user_src(4))}")
    return ax % ndim


def _size(tracers: Sequence[Tracer], axes: Sequence[int | None], axis_size: int | None) -> int:
    sizes = {t.shape[ax] for t, ax in zip(tracers, axes) if ax is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise ArgumentError("vg.vmap: no argument is mapped (every in_axes entry is None, or "
                            "there are no array arguments): pass axis_size=n"
                            f"{_where(user_src(4))}")
    if len(sizes) > 1:
        got = ", ".join(f"{tuple(t.shape)} along axis {ax}"
                        for t, ax in zip(tracers, axes) if ax is not None)
        raise ArgumentError(f"vg.vmap: the mapped axes have different sizes {sorted(sizes)}"
                            f" ({got}{', axis_size=' + str(axis_size) if axis_size else ''})"
                            f"{_where(user_src(4))}")
    return sizes.pop()


def _move_out(x: Any, spec: Any, n: int, fun: Callable) -> Any:
    """The result with each output's mapped axis (a leading one) moved to its out_axes."""
    if isinstance(x, _Out):
        if spec is None:
            if x.mapped:
                raise ArgumentError("vg.vmap: out_axes=None for an output that depends on the"
                                    f" mapped inputs (in {getattr(fun, '__name__', fun)}"
                                    f"{_where(fun_src(fun))}): give it an axis")
            return x.t
        t = x.t if x.mapped else vnp.broadcast_to(x.t[None], (n,) + tuple(x.t.shape))
        ax = _axis(spec, t.ndim, "out_axes", t.shape)
        return vnp.moveaxis(t, 0, ax) if ax else t
    if isinstance(x, (tuple, list)):
        specs = spec if isinstance(spec, (tuple, list)) else [spec] * len(x)
        if len(specs) != len(x):
            raise ArgumentError(f"vg.vmap: out_axes {spec!r} does not match the result's "
                                f"structure ({len(x)} items){_where(fun_src(fun))}")
        items = [_move_out(c, s, n, fun) for c, s in zip(x, specs)]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):
        return {k: _move_out(v, spec[k] if isinstance(spec, dict) else spec, n, fun)
                for k, v in x.items()}
    if type(x) in (bool, int, float, complex) and spec is not None:
        # a Python number returned as it is: stack([f(x) for x in xs]) has it n times (as
        # in JAX, where it is an array of the mapped size)
        return _move_out(_Out(vnp.asarray(x), False), spec, n, fun)
    return x
