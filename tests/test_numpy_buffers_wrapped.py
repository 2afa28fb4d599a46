"""NumPy buffers (np.zeros written with traced values, numpy/_buffers.py) in functions that the
traced function reaches only by running: through a lambda, functools.partial, a nested def, a
callable object, an attribute (`model.loss`, a dataclass field), a dict of functions, a bound
method, in this module or in other modules, one or two calls deep. The retry swaps the modules
of the user's frames the store was raised in (raising_modules), so the result is NumPy's, the
gradient matches central differences, the batched graph equals the unbatched one, every
module's globals come back, and what a buffer does not cure keeps its typed error."""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy
import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
from vecgrad.errors import TracedIntoNumpyError
from vecgrad.staging import _RETRIES

R = np.random.default_rng(29)
GLOBAL_BUF = np.zeros(4)


def row_scores(X, w):
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.dot(X[i], w) + np.max(X[i])
    return np.sum(np.tanh(out) ** 2)


def min_path(D, w):
    n, m = D.shape
    prev = np.cumsum(D[0] * w[0])
    for i in range(1, n):
        cur = np.zeros(m)
        cur[0] = prev[0] + D[i, 0]
        for j in range(1, m):
            cur[j] = D[i, j] * w[j % len(w)] + min(prev[j], cur[j - 1], prev[j - 1])
        prev = cur
    return np.sum(prev ** 2)


def taps(X, w):
    out = np.empty_like(X)
    out[0] = X[0]
    for i in range(1, X.shape[0]):
        out[i] = X[i] * w[0] + X[i - 1] * w[1]
    return np.sum(np.sin(out))


def stencil(X, w):
    n, m = X.shape
    out = np.zeros((n - 2, m - 2))
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            out[i - 1, j - 1] = w[0] * X[i, j] + w[1] * (X[i - 1, j] + X[i + 1, j]
                                                          + X[i, j - 1] + X[i, j + 1])
    return np.sum(out ** 2)


# Other modules (a model defined in a file of its own, passed in or looked up): their globals
# are not this module's, and no name of this module's code reaches their functions.
_A: dict = {"np": np}
_B: dict = {"numpy": numpy}
exec("def inner(x):\n    h = numpy.zeros(3)\n    h[0] = x.sum()\n    h[1] = x.max()\n"  # noqa: S102
     "    h[2] = (x * x).sum()\n    return h", _B)
_A["TABLE"] = {"inner": _B["inner"]}
exec("def outer(X, w):\n    acc = np.zeros(X.shape[0])\n"  # noqa: S102
     "    for i in range(X.shape[0]):\n"
     "        acc[i] = np.dot(TABLE['inner'](X[i] * w[0]), w[:3])\n"
     "    return np.sum(acc ** 2)\n"
     "def rows(X, w):\n    out = np.zeros(X.shape[0])\n"
     "    for i in range(X.shape[0]):\n        out[i] = np.sum(X[i] * w[0]) ** 2\n"
     "    return out.sum()", _A)


@dataclass
class Program:
    natural: Callable


class Model:
    def __init__(self, f: Callable):
        self.f = f

    def loss(self, X, w):
        return self.f(X, w)

    def __call__(self, X, w):
        return self.f(X, w)


REGISTRY: dict[str, Callable] = {}


def _wrappers(f: Callable) -> dict[str, Callable]:
    """f reached in the ways users wrap a loss (never by a global name of the wrapper's code)."""
    p, m, attr = Program(f), Model(f), "natural"
    REGISTRY["loss"] = f

    def nested(X, w):
        return p.natural(X, w)

    def by_registry(X, w):
        return REGISTRY["loss"](X, w)

    return {"lambda": lambda X, w: p.natural(X, w),
            "partial": functools.partial(f),
            "partial_bound": functools.partial(lambda scale, X, w: scale * p.natural(X, w), 2.0),
            "nested": nested, "object": m, "method": m.loss,
            "lambda_method": lambda X, w: m.loss(X, w), "registry": by_registry,
            "getattr": lambda X, w: getattr(p, attr)(X, w)}


def _inputs(f: Callable) -> tuple:
    X = R.standard_normal((5, 4)) if f is not stencil else R.standard_normal((5, 5))
    return X, R.standard_normal(4)


def _modules_intact() -> bool:
    return globals()["np"] is numpy and np.zeros is numpy.zeros and \
        _A["np"] is numpy and _B["numpy"] is numpy and np.empty_like is numpy.empty_like


PROGRAMS = [row_scores, min_path, taps, stencil, _A["outer"], _A["rows"]]
WRAPS = list(_wrappers(row_scores))


@pytest.mark.parametrize("how", WRAPS)
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_a_wrapped_loss_with_numpy_buffers_is_numpys(f, how):
    loss = _wrappers(f)[how]
    X, w = _inputs(f)
    scale = 2.0 if how == "partial_bound" else 1.0
    assert_same(vg.jit(loss)(X, w), scale * f(X, w), rtol=1e-12)
    g = vg.grad(loss, argnums=(0, 1))(X, w)
    want = vg.grad(f, argnums=(0, 1))(X, w)  # (f itself: its module found statically)
    for a, b in zip(g, want):
        assert_same(a, scale * b, rtol=1e-9)
    assert _modules_intact()


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_wrapped_buffers_match_central_differences_and_batch_exactly(f):
    X, w = _inputs(f)
    loss = _wrappers(f)["lambda"]
    vg.check_grads(loss, (X, w), rtol=1e-6, atol=1e-8)
    e, leaves = entry(loss, (X, w))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    assert _modules_intact()


def test_value_and_grad_and_explain_of_a_wrapped_loss():
    X, w = _inputs(min_path)
    p = Program(min_path)
    v, g = vg.value_and_grad(lambda X, w: p.natural(X, w), argnums=1)(X, w)
    assert_same(v, min_path(X, w), rtol=1e-12)
    assert_same(g, vg.grad(min_path, argnums=1)(X, w), rtol=1e-9)
    assert vg.explain(lambda X, w: p.natural(X, w), X, w) is not None
    assert _modules_intact()


def writes_global(X, w):
    for i in range(4):
        GLOBAL_BUF[i] = X[i, 0] * w[0]
    return GLOBAL_BUF.sum()


def buffer_then_global(X, w):
    out = np.zeros(2)
    out[0] = X[0, 0]
    GLOBAL_BUF[0] = out[0] * w[0]  # (a module-level NumPy array: no buffer cures it)
    return GLOBAL_BUF.sum()


@pytest.mark.parametrize("f", [writes_global, buffer_then_global], ids=lambda f: f.__name__)
def test_what_a_buffer_does_not_cure_keeps_its_error_under_a_wrapper(f):
    p = Program(f)
    with pytest.raises(TracedIntoNumpyError, match="test_numpy_buffers_wrapped.py"):
        vg.jit(lambda X, w: p.natural(X, w))(*_inputs(f))
    assert _modules_intact() and GLOBAL_BUF.sum() == 0


def _chain(depth: int) -> tuple[Callable, list[dict]]:
    """`depth` modules, each calling the next through a dict, each making an np.zeros buffer
    and storing into it before the call (so each retry fails one module deeper)."""
    mods: list[dict[str, Any]] = [{"np": np} for _ in range(depth)]
    for k in range(depth - 1, -1, -1):
        call = "NEXT['f'](x[1:])" if k < depth - 1 else "x.sum()"
        exec("def f(x):\n    b = np.zeros(2)\n    b[0] = x[0] ** 2\n"  # noqa: S102
             f"    b[1] = {call}\n    return b.sum()", mods[k])
        if k < depth - 1:
            mods[k]["NEXT"] = {"f": mods[k + 1]["f"]}
    return mods[0]["f"], mods


@pytest.mark.parametrize("depth", [1, 2, 3, _RETRIES])
def test_buffers_in_modules_reached_one_after_another(depth):
    """Each retry meets the store of a module one call deeper, swaps it too, and goes on."""
    f, mods = _chain(depth)
    x = R.standard_normal(6)
    loss = lambda x: f(x)
    assert_same(vg.jit(loss)(x), f(x), rtol=1e-12)
    vg.check_grads(loss, (x,), rtol=1e-6, atol=1e-8)
    assert all(m["np"] is numpy for m in mods)


def test_retries_stop_after_a_few_modules_with_the_first_error():
    f, mods = _chain(_RETRIES + 1)
    with pytest.raises(TracedIntoNumpyError, match="<string>"):
        vg.jit(lambda x: f(x))(R.standard_normal(8))
    assert all(m["np"] is numpy for m in mods)
