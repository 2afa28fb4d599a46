"""NumPy's order of complex numbers, for the backends whose library orders them otherwise
(JAX's complex max drops NaNs; torch has no complex comparison at all).

NumPy compares complex numbers lexicographically, real parts first, with the rules of its
`CLT`/`CLE`/`CGT`/`CGE` macros (numpy/_core/src/umath/loops.c.src): a real-part decision
counts only when neither imaginary part is NaN. `maximum`/`minimum` return the first operand
where it is NaN (either part) or wins, else the second (a NaN second operand propagates);
`fmax`/`fmin` return the first where the second is NaN or the first wins. A max/min
reduction is the first NaN along the axes if there is one, else the largest real part with
the largest imaginary part among its ties.

The functions are written once over a small namespace `lib` that each backend fills with its
library's calls (`real`, `imag`, `isnan`, `where`, `complex`, `max`, `min`, `any`, `first`,
`permute`); `lowering(lib, cast)` gives the backend's table an `ordered(builder, name)` that
picks the complex form at link time where an operand is complex.
"""
from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from .lowering import Builder, Site, cast_all

_STRICT = {"lt": "lt", "le": "lt", "gt": "gt", "ge": "gt", "max": "gt", "min": "lt"}
_TIE = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "max": "ge", "min": "le"}
_CMP: dict[str, Callable[[Any, Any], Any]] = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def compare(lib: SimpleNamespace, op: str) -> Callable[[Any, Any], Any]:
    """x `op` y for op in lt, le, gt, ge (max and min: NumPy's CGE and CLE)."""
    strict, tie = _CMP[_STRICT[op]], _CMP[_TIE[op]]

    def f(x: Any, y: Any) -> Any:
        xr, xi, yr, yi = lib.real(x), lib.imag(x), lib.real(y), lib.imag(y)
        numbers = ~lib.isnan(xi) & ~lib.isnan(yi)
        return (strict(xr, yr) & numbers) | ((xr == yr) & tie(xi, yi))
    return f


def _isnan(lib: SimpleNamespace, x: Any) -> Any:
    return lib.isnan(lib.real(x)) | lib.isnan(lib.imag(x))


def extreme(lib: SimpleNamespace, op: str, ignore_nan: bool) -> Callable[[Any, Any], Any]:
    """maximum (op "max") or minimum ("min"); fmax / fmin with `ignore_nan`."""
    wins = compare(lib, op)

    def f(x: Any, y: Any) -> Any:
        keep = _isnan(lib, y if ignore_nan else x) | wins(x, y)
        return lib.where(keep, x, y)
    return f


def _to_last(lib: SimpleNamespace, x: Any, axes: tuple[int, ...]) -> Any:
    """The reduced axes as one last axis (of length 1 for none)."""
    rest = [a for a in range(x.ndim) if a not in axes]
    return lib.permute(x, rest + list(axes)).reshape([x.shape[a] for a in rest] + [-1])


def reduce_extreme(lib: SimpleNamespace, op: str) -> Callable[[Any, tuple[int, ...]], Any]:
    """max (op "max") or min ("min") over `axes`."""
    best, worst = (lib.max, -float("inf")) if op == "max" else (lib.min, float("inf"))

    def f(x: Any, axes: tuple[int, ...]) -> Any:
        x = _to_last(lib, x, axes)
        nan = _isnan(lib, x)
        r, i = lib.real(x), lib.imag(x)
        br = best(lib.where(nan, worst, r))
        bi = best(lib.where((r == br[..., None]) & ~nan, i, worst))
        return lib.where(lib.any(nan), lib.first(x, nan), lib.complex(br, bi))
    return f


def functions(lib: SimpleNamespace) -> dict[str, Callable[..., Any]]:
    """Each ordered primitive's complex form, by the primitive's name."""
    return {**{op: compare(lib, op) for op in _CMP},
            "maximum": extreme(lib, "max", False), "minimum": extreme(lib, "min", False),
            "fmax": extreme(lib, "max", True), "fmin": extreme(lib, "min", True),
            "reduce_max": reduce_extreme(lib, "max"), "reduce_min": reduce_extreme(lib, "min")}


def lowering(lib: SimpleNamespace, cast: Callable) -> Callable[[Builder, str], Builder]:
    """`ordered(real, name)`: the builder `real`, or where an operand is complex, the
    primitive `name`'s complex form in `lib` (operands cast to the compute dtype)."""
    fns = functions(lib)

    def ordered(real: Builder, name: str) -> Builder:
        def build(site: Site, **params: Any) -> Callable:
            if not any(a.dtype.kind == "c" for a in site.ins):
                return real(site, **params)
            fn = fns[name]
            return cast_all((lambda *xs: fn(*xs, **params)) if params else fn, site, cast)
        return build
    return ordered
