"""autograd's public API on top of vecgrad (see bench/autograd_suite/README.md).

autograd's operators take `argnum` (one position) and apply to `fun(*args)`; each maps onto the
vecgrad transformation with `argnums=argnum`. Python numbers given as the differentiated
argument become float64 arrays, as autograd treats them as arrays too.
"""
from __future__ import annotations

import builtins as _b
from typing import Any

import numpy as _onp

import vecgrad as _vg

from . import numpy  # (importing it installs the hook for autograd.numpy.* and .scipy.*)


def _need(name: str) -> Any:
    fn = getattr(_vg, name, None)
    if fn is None:
        raise NotImplementedError(f"vecgrad has no `{name}` yet")
    return fn


def _arr(x: Any) -> Any:
    """Python numbers (also inside tuples, lists and dicts) as float64/complex128 arrays."""
    if _b.isinstance(x, (_b.float, _b.int, _b.complex)) and not _b.isinstance(x, _b.bool):
        return _onp.asarray(x, _onp.complex128 if _b.isinstance(x, _b.complex) else _onp.float64)
    if _b.type(x) in (_b.tuple, _b.list):
        return _b.type(x)(_arr(c) for c in x)
    if _b.type(x) is _b.dict:
        return {k: _arr(c) for k, c in x.items()}
    return x


def _args(args: _b.tuple, argnum: Any) -> _b.tuple:
    nums = argnum if _b.isinstance(argnum, (_b.tuple, _b.list)) else (argnum,)
    return _b.tuple(_arr(a) if i in nums else a for i, a in enumerate(args))


def _nary(make: Any) -> Any:
    """An autograd operator `op(fun, argnum=0)(*args, **kwargs)` from `make(fun, argnum)`,
    named as autograd names them (`grad_of_foo_wrt_argnum_1`)."""
    name = make.__name__.lstrip("_")

    def op(fun: Any, argnum: Any = 0, *rest: Any) -> Any:
        def apply(*args: Any, **kwargs: Any) -> Any:
            f = (lambda *a: fun(*a, **kwargs)) if kwargs else fun
            return make(f, argnum, *rest)(*_args(args, argnum))
        fname = getattr(fun, "__name__", "fn")
        apply.__name__ = f"{name}_of_{fname}_wrt_argnum_{argnum}"
        apply.__doc__ = f"    {name} of function {fname} with respect to argument number " \
            f"{argnum}. Takes the same arguments as {fname} but returns the {name}."
        return apply
    op.__name__ = name
    op.__doc__ = f"\n    Returns a function which computes the {name} of `fun` with respect " \
        "to positional argument number `argnum` (vecgrad's transformation)."
    return op


def _scalar(out: Any) -> Any:
    """autograd's grad takes any output with one element (shape (1,), (1, 1), ...)."""
    return numpy.reshape(out, ()) if numpy.size(out) == 1 and numpy.ndim(out) else out


def _sel(cts: Any, argnum: Any) -> Any:
    if _b.isinstance(argnum, (_b.tuple, _b.list)):
        return _b.tuple(cts[i] for i in argnum)
    return cts[argnum]


_WRAPPED: _b.dict = {}  # (kind, fun) -> the wrapped function, so vecgrad's cache hits


def _wrap(kind: str, fun: Any) -> Any:
    """fun with a one-element output as a scalar; "value" also returns the output as aux,
    "aux" keeps fun's own aux."""
    key = (kind, fun)
    if key not in _WRAPPED:
        def value(*a: Any) -> Any:
            out = fun(*a)
            return _scalar(out), out

        def aux(*a: Any) -> Any:
            out, extra = fun(*a)
            return _scalar(out), extra
        _WRAPPED[key] = {"grad": lambda *a: _scalar(fun(*a)), "value": value, "aux": aux}[kind]
    return _WRAPPED[key]


@_nary
def grad(fun: Any, argnum: Any) -> Any:
    return _vg.grad(_wrap("grad", fun), argnums=argnum)


@_nary
def value_and_grad(fun: Any, argnum: Any) -> Any:
    both = _vg.value_and_grad(_wrap("value", fun), argnums=argnum, has_aux=True)

    def run(*args: Any) -> Any:
        (_, out), g = both(*args)
        return out, g
    return run


@_nary
def grad_and_aux(fun: Any, argnum: Any) -> Any:
    return _vg.grad(_wrap("aux", fun), argnums=argnum, has_aux=True)


def _vjp_at(fun: Any, argnum: Any) -> Any:
    def run(*args: Any) -> Any:
        out, vjp_fn = _vg.vjp(fun, *args)
        return (lambda g: _sel(vjp_fn(g), argnum)), out
    return run


@_nary
def make_vjp(fun: Any, argnum: Any) -> Any:
    return _vjp_at(fun, argnum)


vector_jacobian_product = None  # set below (needs make_vjp)


@_nary
def elementwise_grad(fun: Any, argnum: Any) -> Any:
    def run(*args: Any) -> Any:
        vjp, ans = _vjp_at(fun, argnum)(*args)
        return vjp(_onp.ones_like(ans))
    return run


@_nary
def holomorphic_grad(fun: Any, argnum: Any) -> Any:
    return elementwise_grad(fun, argnum)


@_nary
def jacobian(fun: Any, argnum: Any) -> Any:
    return _need("jacobian")(fun, argnums=argnum)


@_nary
def hessian(fun: Any, argnum: Any) -> Any:
    return _need("hessian")(fun, argnums=argnum)


def _jvp_at(fun: Any, argnum: int) -> Any:
    def run(*args: Any) -> Any:
        def at(v: Any) -> Any:
            f = lambda x: fun(*args[:argnum], x, *args[argnum + 1:])
            return _need("jvp")(f, (args[argnum],), (_arr(v),))
        return at
    return run


@_nary
def make_jvp(fun: Any, argnum: Any) -> Any:
    return _jvp_at(fun, argnum)


@_nary
def deriv(fun: Any, argnum: Any) -> Any:
    def run(*args: Any) -> Any:
        return _jvp_at(fun, argnum)(*args)(_onp.ones_like(_arr(args[argnum])))[1]
    return run


@_nary
def make_hvp(fun: Any, argnum: Any) -> Any:
    def run(*args: Any) -> Any:
        g = grad(fun, argnum)
        return lambda v: _jvp_at(g, argnum)(*args)(v)[1], fun(*args)
    return run


def hessian_tensor_product(fun: Any, argnum: int = 0) -> Any:
    """(H . v) for the Hessian H of fun at args[argnum]: the gradient of <grad fun, v>."""
    g = grad(fun, argnum)

    def inner(*args: Any) -> Any:
        *xs, v = args
        return numpy.tensordot(g(*xs), v, numpy.ndim(v))
    return grad(inner, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun: Any, argnum: int = 0) -> Any:
    """v . J for the Jacobian J of fun at args[argnum], v contracted with fun's leading axes
    (autograd's definition: the Jacobian of tensordot(v, fun(x), v.ndim))."""
    def inner(*args: Any) -> Any:
        *xs, v = args
        return numpy.tensordot(v, fun(*xs), numpy.ndim(v))
    return jacobian(inner, argnum)


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f: Any, g: Any = None, f_argnum: int = 0) -> Any:
    """Generalized Gauss-Newton vector products, as autograd defines them."""
    g = g or (lambda x: 0.5 * numpy.sum(x ** 2, axis=-1))

    def make(*args: Any) -> Any:
        f_vjp, f_x = make_vjp(f, f_argnum)(*args)
        f_jvp = lambda v: make_jvp(f, f_argnum)(*args)(v)[1]
        g_hvp, _ = make_hvp(g)(f_x)
        return lambda v: f_vjp(g_hvp(f_jvp(v)))
    return make


def checkpoint(fun: Any) -> Any:
    """Recomputation is a scheduling choice in vecgrad: semantically the identity."""
    return fun


def grad_named(fun: Any, argname: str) -> Any:
    import inspect
    names = _b.list(inspect.signature(fun).parameters)
    return grad(fun, names.index(argname))


def multigrad_dict(fun: Any) -> Any:
    import inspect
    names = _b.list(inspect.signature(fun).parameters)

    def run(*args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        bound.apply_defaults()
        vals = [bound.arguments[n] for n in names]
        gs = _vg.grad(fun, argnums=_b.tuple(range(len(names))))(*map(_arr, vals))
        return _b.dict(zip(names, gs))
    return run


def primitive(f: Any) -> Any:
    from .extend import primitive as p
    return p(f)


# autograd's container constructors are the builtins here (pytrees are plain containers)
tuple, list, dict, isinstance, type = _b.tuple, _b.list, _b.dict, _b.isinstance, _b.type
