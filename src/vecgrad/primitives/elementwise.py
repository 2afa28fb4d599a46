"""Elementwise and reduction primitives, each defined by one line through a family helper."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ComplexError, ShapeError
from ..ir import Aval
from .core import REGISTRY, Primitive, register
from .shapes import _lift, broadcast_to, reshape

__all__ = [
    "abs_",
    "add",
    "angle",
    "cast",
    "conj",
    "cos",
    "div",
    "eq",
    "exp",
    "expm1",
    "ge",
    "gt",
    "imag",
    "le",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logistic",
    "lt",
    "maximum",
    "minimum",
    "mul",
    "ne",
    "neg",
    "pow_",
    "powc",
    "real",
    "real_only",
    "reduce_max",
    "reduce_min",
    "reduce_sum",
    "sign",
    "sin",
    "sqrt",
    "stop_gradient",
    "sub",
    "tanh",
    "where",
]


@functools.cache
def _out_dtype(fn: Callable, params: tuple, *dts: np.dtype) -> np.dtype:
    """The result dtype NumPy gives for `fn` on these input dtypes (NumPy 2 promotion)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(*[np.ones((), d) for d in dts], **dict(params))).dtype


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    s0 = shapes[0]
    if all(s == s0 for s in shapes):
        return s0
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError("operands could not be broadcast together with shapes "
                         + " ".join(str(s) for s in shapes)) from None


def batch_elementwise(prim_name: str) -> Callable:
    """The batching rule of a broadcasting op: batched operands get unit axes after the batch
    axis up to the common rank, shared operands broadcast as they are."""
    def rule(n: int, batched: tuple[bool, ...], *ins: Any, **params: Any) -> Any:
        rank = max(np.ndim(x) - b for x, b in zip(ins, batched))
        return REGISTRY[prim_name](*[_lift(x, rank) if b else x for x, b in zip(ins, batched)],
                                   **params)
    return rule


def real_only(name: str, *avals: Aval, why: str | None = None) -> None:
    """Raise ComplexError if an operand is complex (for operations that need an order, or
    `why` else)."""
    if any(a.dtype.kind == "c" for a in avals):
        raise ComplexError(name, why=why) if why else ComplexError(name)


def elementwise(name: str, fn: Callable, vjp: Callable | None,
                real_input: str | None = None, **kw: Any) -> Primitive:
    """An n-ary broadcasting primitive. `vjp(g, ans, *ins, **params) -> tuple` in out shape.
    `real_input`: complex operands are refused for that reason. (Comparisons and maximum
    take complex numbers in NumPy's lexicographic order: real parts, then imaginary parts.)

    Complex numbers follow JAX's convention: a VJP is the transpose of the JVP under the real
    pairing <a, b> = Re(sum(a * b)), without conjugation. For a holomorphic f the rule is
    g * f'(z), the same formula as for real inputs; the non-holomorphic ones (abs, sign,
    real, imag, conj, angle) say so in their rules. A real input of a complex operation gets
    the real part of its cotangent (the AD driver's cast)."""
    def shape_rule(*avals: Aval, **params: Any) -> Aval:
        if real_input:
            real_only(getattr(fn, "__name__", name), *avals, why=real_input)
        shape = _broadcast(*[a.shape for a in avals])
        ps = tuple(sorted(params.items())) if params else ()
        return Aval(shape, _out_dtype(fn, ps, *[a.dtype for a in avals]))
    return register(Primitive(name, fn, shape_rule, vjp, batch_elementwise(name),
                              elementwise=True, **kw))


def unary(name: str, fn: Callable, vjp: Callable | None) -> Primitive:
    """A one-input elementwise primitive; `vjp(g, ans, x)` returns the one cotangent."""
    return elementwise(name, fn, None if vjp is None else (lambda g, ans, x: (vjp(g, ans, x),)))


def _nograd(name: str, fn: Callable) -> Primitive:
    return elementwise(name, fn, None)


def _logistic(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) as users write it, bit for bit (so the written form can become
    this primitive); exp(-x) overflows to inf for x < -709, where 1 / inf = 0 is the right
    value: that warning is not the user's."""
    with np.errstate(over="ignore"):
        e = np.exp(np.negative(x))
    if not isinstance(e, np.ndarray):
        return 1 / (1 + e)
    e += 1
    return np.divide(1, e, out=e)


# --- unary: name, impl, VJP (g, ans, x) -> cotangent --------------------------------
neg = unary("neg", np.negative, lambda g, ans, x: -g)
exp = unary("exp", np.exp, lambda g, ans, x: g * ans)
log = unary("log", np.log, lambda g, ans, x: g / x)
log1p = unary("log1p", np.log1p, lambda g, ans, x: g / (x + 1))
expm1 = unary("expm1", np.expm1, lambda g, ans, x: g * (ans + 1))
sqrt = unary("sqrt", np.sqrt, lambda g, ans, x: g * 0.5 / ans)  # d sqrt x = 1/(2 sqrt x)


def _abs_vjp(g: Any, ans: Any, x: Any) -> Any:
    """g sign(x) for real x; g conj(z) / |z| for complex z (JAX's rule), which is 0 at z = 0,
    as JAX's (two real operations and one complex product: sign(z) costs ~30 times abs(z))."""
    if not _cplx(x):
        return g * sign(x)
    return g / where(eq(ans, 0), 1.0, ans) * conj(x)


abs_ = unary("abs", np.abs, _abs_vjp)


def _sign_vjp(g: Any, ans: Any, x: Any) -> Any:
    """Zero for real x; for complex z, sign(z) = z/|z| has the VJP
    (g - Re(g sign(z)) conj(sign(z))) / |z| (zero at z = 0)."""
    if not _cplx(x):
        return None
    a = abs_(x)
    return where(eq(a, 0), 0.0, (g - real(g * ans) * conj(ans)) / where(eq(a, 0), 1.0, a))


def _cplx(x: Any) -> bool:
    return x.dtype.kind == "c"


sign = unary("sign", np.sign, _sign_vjp)
tanh = unary("tanh", np.tanh, lambda g, ans, x: g * (1 - ans * ans))
sin = unary("sin", np.sin, lambda g, ans, x: g * cos(x))
cos = unary("cos", np.cos, lambda g, ans, x: -g * sin(x))
logistic = unary("logistic", _logistic, lambda g, ans, x: g * ans * (1 - ans))
stop_gradient = unary("stop_gradient", np.positive, None)
logical_not = _nograd("logical_not", np.logical_not)
# complex parts (VJPs under the real pairing Re(sum(a * b)): Re z -> g, Im z -> -i g,
# conj z -> conj g, arg z = Im log z -> -i g / z); np.real and np.imag return views
real = elementwise("real", np.real, lambda g, ans, x: (g,))
imag = elementwise("imag", np.imag, lambda g, ans, x: (g * -1j,))
conj = unary("conj", np.conjugate, lambda g, ans, x: conj(g))
angle = unary("angle", np.angle, lambda g, ans, x: g * -1j / x if _cplx(x) else None)


_SQRT_EXACT = (np.dtype(np.float32), np.dtype(np.float64))  # (float16: -0.0 ** 0.5 is +0.0)


def _powc(x: np.ndarray, p: float) -> np.ndarray:
    if p == 2:
        return np.square(x)
    if p == 0.5 and x.dtype in _SQRT_EXACT:  # (np.power's result bit for bit, twice as
        return np.sqrt(x)  # fast: the derivative of x ** 1.5)
    if p in _BY_SQUARING and x.dtype in _SQRT_EXACT:
        return _by_squaring(x, int(p))
    return np.power(x, p)


# Small integer powers of real floats by squaring, as lax.integer_pow does: np.power calls the
# C library's pow per element, whose path for a negative base took 2.1 us per float64 here
# ((1000, 64) x ** 3: 135 ms; x * x * x: 29 us; a positive base: 170 us), and the VJP of
# x ** 4 is 4 x ** 3. At most three products (p <= 8: two roundings more than pow's one,
# a relative error within 4 eps); inf, nan and signed zeros as pow gives them.
_BY_SQUARING = frozenset(range(3, 9))


def _by_squaring(x: np.ndarray, n: int) -> np.ndarray:
    acc, base = None, x
    while n:
        if n & 1:
            acc = base if acc is None else np.multiply(acc, base)
        n >>= 1
        if n:
            base = np.square(base)
    return acc


def _powc_vjp(g: Any, ans: Any, x: Any, p: float) -> tuple:
    if p == 0:
        return (None,)
    return (g * (p * x if p == 2 else p * powc(x, p=p - 1)),)  # d x^p = p x^(p-1)


powc = elementwise("powc", _powc, _powc_vjp)


def _pow_vjp(g: Any, ans: Any, x: Any, y: Any) -> tuple:
    # d/dx x^y = y x^(y-1), with x^0 in place of x^(y-1) where y = 0 (finite at x = 0: the
    # polynomial-features pattern x ** arange(n)); d/dy x^y = log(x) x^y, taken as 0 at
    # x = 0 (its limit for y > 0) and nan for real x < 0, where x^y is not differentiable
    # in y (as JAX and autograd)
    gx = g * y * pow_(x, where(eq(y, 0), 1, y - 1))
    return gx, g * log(where(eq(x, 0), 1, x)) * ans


_I8 = np.dtype(np.int8)


def _tie(x: Any, y: Any, g: Any) -> Any:
    """1 where x wins, 1/2 on ties (as JAX), 0 where y wins (and where either is NaN), in g's
    dtype: (x >= y) + (x > y) counted in int8, then halved in g's dtype, so that one pass
    writes floats (np.where on random masks costs 10x as much; two masks cast to floats and
    added wrote three float arrays)."""
    return 0.5 * cast(cast(ge(x, y), dtype=_I8) + cast(gt(x, y), dtype=_I8), dtype=g.dtype)


# --- binary: name, impl, VJP (g, ans, x, y) -> (gx, gy) in the broadcast shape ------
add = elementwise("add", np.add, lambda g, ans, x, y: (g, g))
sub = elementwise("sub", np.subtract, lambda g, ans, x, y: (g, -g))
mul = elementwise("mul", np.multiply, lambda g, ans, x, y: (g * y, g * x))
div = elementwise("div", np.true_divide,
                  lambda g, ans, x, y: (g / y, -(g / y * ans)))  # g / y is computed once
pow_ = elementwise("pow", np.power, _pow_vjp)
maximum = elementwise("maximum", np.maximum,
                      lambda g, ans, x, y: (g * _tie(x, y, g), g * _tie(y, x, g)))
minimum = elementwise("minimum", np.minimum,
                      lambda g, ans, x, y: (g * _tie(y, x, g), g * _tie(x, y, g)))
lt = _nograd("lt", np.less)
le = _nograd("le", np.less_equal)
gt = _nograd("gt", np.greater)
ge = _nograd("ge", np.greater_equal)
eq = _nograd("eq", np.equal)
ne = _nograd("ne", np.not_equal)
logical_and = _nograd("logical_and", np.logical_and)
logical_or = _nograd("logical_or", np.logical_or)
where = elementwise("where", np.where,
                    lambda g, ans, c, x, y: (None, where(c, g, 0.0), where(c, 0.0, g)))


def _cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = np.real(x)  # complex -> real keeps the real part (vnp.astype warns as NumPy)
    return x.astype(dtype)  # always a copy: the result may be written in place later


def _cast_vjp(g: Any, ans: Any, x: Any, dtype: np.dtype) -> tuple:
    return (cast(g, dtype=x.dtype) if x.dtype.kind in "fc" else None,)


cast = elementwise("cast", _cast, _cast_vjp)


# --- reductions over static axes --------------------------------------------------------

def _keep(x: Any, g: Any, axes: tuple[int, ...]) -> Any:
    """Reshape a reduced value back to keepdims form and broadcast it to x's shape."""
    kd = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return broadcast_to(reshape(g, shape=kd), shape=x.shape)


def _extreme_vjp(g: Any, ans: Any, x: Any, axes: tuple[int, ...]) -> tuple:
    mask = cast(eq(x, _keep(x, ans, axes)), dtype=g.dtype)  # ties share the cotangent
    # (the share g / count on the reduced shape: one pass over x's shape, not two; the same
    # values, the mask being 0 or 1)
    return (mask * _keep(x, g / reduce_sum(mask, axes=axes), axes),)


def _batch_reduce(name: str) -> Callable:
    def rule(n: int, batched: tuple[bool, ...], x: Any, axes: tuple[int, ...]) -> Any:
        return REGISTRY[name](x, axes=tuple(a + 1 for a in axes))
    return rule


def short_last_axis(x: np.ndarray) -> bool:
    """Whether x has many short rows (measured: a transposed copy then pays for itself)."""
    return x.ndim > 0 and 2 <= x.shape[-1] <= 64 and x.size >= 32 * x.shape[-1]


def reduce_along(fn: Callable, x: np.ndarray, axes: tuple[int, ...],
                 keepdims: bool = False) -> np.ndarray:
    """`fn(x, axis=axes)`, fast also over a short last axis: NumPy reduces each short
    contiguous row separately (about 3 ns per element for a max over 16), while a transposed
    copy reduces whole rows at SIMD speed (under 0.5 ns)."""
    if axes != (x.ndim - 1,) or not short_last_axis(x):
        return np.asarray(fn(x, axis=axes, keepdims=keepdims))
    n = x.shape[-1]
    r = fn(np.ascontiguousarray(x.reshape(-1, n).T), axis=0)
    return r.reshape(x.shape[:-1] + ((1,) if keepdims else ()))


def reduction(name: str, fn: Callable, vjp: Callable) -> Primitive:
    """A reduction over static `axes` (no keepdims), with its shape and batch rules (max and
    min take complex input in NumPy's lexicographic order, NaN first)."""
    def shape_rule(x: Aval, axes: tuple[int, ...]) -> Aval:
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ShapeError(f"{name}: axis {axes} out of range for an array of shape {x.shape}")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return Aval(shape, _out_dtype(fn, (("axis", ()),), x.dtype))

    def impl(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return reduce_along(fn, x, axes)
    return register(Primitive(name, impl, shape_rule, vjp, _batch_reduce(name)))


reduce_sum = reduction("reduce_sum", np.sum, lambda g, ans, x, axes: (_keep(x, g, axes),))
reduce_max = reduction("reduce_max", np.max, _extreme_vjp)
reduce_min = reduction("reduce_min", np.min, _extreme_vjp)
