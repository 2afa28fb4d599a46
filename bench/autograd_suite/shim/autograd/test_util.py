"""autograd.test_util's checks, written on vecgrad's API: the VJP (reverse mode) and the JVP
(forward mode) of a function are compared with central differences along random directions,
and, to second order, so are the VJP and JVP of those derivatives themselves."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as onp

from . import make_jvp, make_vjp

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a: Any, b: Any) -> bool:
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


# -- vector spaces of pytrees of (real or complex) arrays and numbers -----------------------

def _leaves(x: Any) -> list:
    if isinstance(x, (tuple, list)):
        return [leaf for c in x for leaf in _leaves(c)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def _rebuild(x: Any, it: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return type(x)(_rebuild(c, it) for c in x)
    if isinstance(x, dict):
        return {k: _rebuild(x[k], it) for k in sorted(x)}
    return next(it)


def _map(fn: Any, *xs: Any) -> Any:
    return _rebuild(xs[0], iter([fn(*ls) for ls in zip(*map(_leaves, xs))]))


def _randn_like(a: Any) -> Any:
    a = onp.asarray(a)
    r = onp.random.randn(*a.shape)
    if onp.iscomplexobj(a):
        r = r + 1j * onp.random.randn(*a.shape)
    return r


def _space(x: Any) -> list:
    return [(onp.shape(a), onp.iscomplexobj(a)) for a in _leaves(x)]


def randn(x: Any) -> Any:
    return _map(_randn_like, x)


def inner(a: Any, b: Any) -> float:
    return float(sum(onp.real(onp.vdot(onp.asarray(u), onp.asarray(v)))
                     for u, v in zip(_leaves(a), _leaves(b))))


def covector(x: Any) -> Any:
    return _map(onp.conj, x)


def add(a: Any, b: Any) -> Any:
    return _map(lambda u, v: onp.asarray(u) + onp.asarray(v), a, b)


def scale(a: Any, s: float) -> Any:
    return _map(lambda u: onp.asarray(u) * s, a)


# -- the checks ------------------------------------------------------------------------------

def numerical_jvp(f: Any, x: Any) -> Any:
    """v -> (f(x + v eps/2) - f(x - v eps/2)) / eps."""
    return lambda v: scale(add(f(add(x, scale(v, EPS / 2))), scale(f(add(x, scale(v, -EPS / 2))),
                                                                   -1.0)), 1.0 / EPS)


def check_vjp(f: Any, x: Any) -> None:
    vjp, y = make_vjp(f)(x)
    x_v, y_v = randn(x), randn(y)
    vjp_y = covector(vjp(covector(y_v)))
    assert _space(vjp_y) == _space(x), f"VJP space {_space(vjp_y)} != {_space(x)}"
    exact, numeric = inner(x_v, vjp_y), inner(y_v, numerical_jvp(f, x)(x_v))
    assert scalar_close(numeric, exact), \
        f"VJP check failed with arg {x}:\nanalytic: {exact}\nnumeric:  {numeric}"


def check_jvp(f: Any, x: Any) -> None:
    v = randn(x)
    check_equivalent(make_jvp(f)(x)(v)[1], numerical_jvp(f, x)(v))


def check_equivalent(x: Any, y: Any) -> None:
    assert _space(x) == _space(y), f"space mismatch:\nx: {_space(x)}\ny: {_space(y)}"
    v = randn(x)
    assert scalar_close(inner(x, v), inner(y, v)), f"value mismatch:\nx: {x}\ny: {y}"


def _check_grads(f: Any, argnum: Any = 0, modes: Any = None, order: int = 2) -> Any:
    """check_grads(f, argnum, modes, order)(*args), as autograd's."""
    modes = ["fwd", "rev"] if modes is None else modes

    def check(x: Any) -> None:
        if "fwd" in modes:
            check_jvp(f, x)
            if order > 1:
                v = randn(x)
                check_grads(lambda x, v: make_jvp(f)(x)(v)[1], (0, 1), modes,
                            order - 1)(x, v)
        if "rev" in modes:
            check_vjp(f, x)
            if order > 1:
                v = randn(f(x))
                check_grads(lambda x, v: make_vjp(f)(x)[0](v), (0, 1), modes,
                            order - 1)(x, v)
    return check


def check_grads(fun: Any, argnum: Any = 0, modes: Any = None, order: int = 2) -> Any:
    """Checks fun's derivatives w.r.t. args[argnum] (a tuple of positions: all of them)."""
    def run(*args: Any, **kwargs: Any) -> None:
        nums = argnum if isinstance(argnum, (tuple, list)) else (argnum,)

        def unary(x: Any) -> Any:
            xs = list(args)
            for k, n in enumerate(nums):
                xs[n] = x[k] if isinstance(argnum, (tuple, list)) else x
            return fun(*xs, **kwargs)
        x = tuple(args[n] for n in nums) if isinstance(argnum, (tuple, list)) else args[argnum]
        _check_grads(unary, 0, modes, order)(x)
    return run


def combo_check(fun: Any, *args: Any, **kwargs: Any) -> Any:
    """Checks fun on every combination of the given argument and keyword values."""
    check = check_grads(fun, *args, **kwargs)

    def run(*arg_options: Any, **kwarg_options: Any) -> None:
        keys = list(kwarg_options)
        for arg_set in itertools.product(*arg_options):
            for kw_set in itertools.product(*[kwarg_options[k] for k in keys]):
                check(*arg_set, **dict(zip(keys, kw_set)))
    return run


