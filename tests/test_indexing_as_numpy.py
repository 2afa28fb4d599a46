"""Indexing keys of every kind, read and written, against NumPy: ints, slices with any step,
None, Ellipsis and integer or boolean arrays, mixed, with the arrays NumPy constants or
traced arguments. Values, shapes and dtypes are NumPy's, an invalid key raises NumPy's
IndexError, and a traced boolean mask (a data-dependent shape) the TraceError that says
what to do. Gradients of the mixed forms are checked against central differences."""
import random

import numpy as np
import pytest
from test_batch import assert_size_independent, check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import TraceError

PARTS = ["0", "-1", "2", ":", "1:3", "::-1", "::2", "-3:", "4:0:-2", "None", "...",
         "I1", "I2", "I3", "B0"]
ARRAYS = {"I1": np.array([0, 2]), "I2": np.array([[0], [1]]), "I3": np.array([1, -1, 0]),
          "B0": np.array([True, False, True, False])}
X = np.arange(4 * 5 * 6, dtype=float).reshape(4, 5, 6)


def _keys(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    keys = {",".join(rng.choice(PARTS) for _ in range(rng.randint(1, 4))) for _ in range(count)}
    return sorted(keys)


def _run(f, mode: str, *args):
    if mode == "const":
        return vg.jit(lambda *a: f(*a, **ARRAYS))(*args)
    return vg.jit(f)(*args, **ARRAYS)


def _expect(key: str, mode: str, call, want, werr, masks_written: bool = False):
    """Compare a vecgrad call with NumPy's result or error. A traced boolean mask has a
    data-dependent shape: reading through one raises TraceError; a write through one may be
    done (where NumPy's result does not depend on the mask's count) or raise TraceError."""
    data_dependent = mode == "traced" and "B0" in key
    if data_dependent and masks_written and werr is None:
        try:
            got = np.asarray(call())
        except TraceError:
            return
        np.testing.assert_array_equal(got, want, err_msg=key)
        return
    if data_dependent or werr is not None:
        exc = (TraceError, werr) if data_dependent and werr else TraceError if data_dependent \
            else werr
        with pytest.raises(exc):
            call()
        return
    got = np.asarray(call())
    assert got.shape == want.shape and got.dtype == want.dtype, key
    np.testing.assert_array_equal(got, want, err_msg=key)


@pytest.mark.parametrize("mode", ["const", "traced"])
@pytest.mark.parametrize("key", _keys(300, 0))
def test_read(key, mode):
    f = eval(f"lambda x, I1, I2, I3, B0: x[{key}]")
    try:
        want, werr = f(X, **ARRAYS), None
    except IndexError as e:
        want, werr = None, type(e)
    _expect(key, mode, lambda: _run(f, mode, X), want, werr)


def _writer(key: str):
    ns: dict = {}
    exec(f"def f(x, v, I1, I2, I3, B0):\n    y = x.copy()\n    y[{key}] = v\n    return y\n",  # noqa: S102
         ns)
    return ns["f"]


def _values(key: str):
    try:
        region = eval(f"x[{key}]", {"x": X, **ARRAYS}).shape
    except IndexError:
        return []
    out = [np.float64(-7.0), -1.0 - np.arange(int(np.prod(region))).reshape(region)]
    return out + ([-1.0 - np.arange(region[-1])] if region else [])


@pytest.mark.parametrize("mode", ["const", "traced"])
@pytest.mark.parametrize("key", _keys(300, 1))
def test_write(key, mode):
    f = _writer(key)
    for v in _values(key):
        _expect(key, mode, lambda v=v: _run(f, mode, X, v), f(X, v, **ARRAYS), None, True)


def test_empty_ellipsis_separates_advanced_indices():
    """NumPy: an Ellipsis standing for no axis still separates advanced indices, so their
    broadcast shape goes first (x[:, 0, ..., j] of a 3-d x is not x[:, 0, j])."""
    j = np.array([0, 2, 1])
    def f(x):
        return x[:, 0, ..., j]

    assert f(X).shape == (3, 4)
    np.testing.assert_array_equal(vg.jit(f)(X), f(X))
    np.testing.assert_array_equal(vg.jit(lambda x, j: x[:, 0, ..., j])(X, j), f(X))


def _check_grad(f, *args, argnums=0):
    rng = np.random.default_rng(0)
    g = vg.grad(f, argnums=argnums)(*args)
    a = args[argnums]
    for _ in range(3):
        d = rng.standard_normal(a.shape)
        h = 1e-6
        up = list(args)
        dn = list(args)
        up[argnums], dn[argnums] = a + h * d, a - h * d
        fd = (f(*up) - f(*dn)) / (2 * h)
        assert abs(np.sum(g * d) - fd) < 1e-6 * max(1.0, abs(fd))


KEYS_TRACED = ["x[0, idx, 1:3]", "x[idx, 2, None]", "x[1:3, idx, 0]", "x[::-1, idx, ::2]",
               "x[idx, :, idx2]", "x[None, idx, 1, ::-1]", "x[:, 0, ..., idx]",
               "x[idx[:, None], idx2]"]


@pytest.mark.parametrize("expr", KEYS_TRACED)
def test_gradient_of_mixed_traced_keys(expr):
    idx, idx2 = np.array([3, 0, 3]), np.array([1, 4, 0])
    w = np.random.default_rng(1).standard_normal(
        eval(expr, {"x": X, "idx": idx, "idx2": idx2}).shape)
    f = eval(f"lambda x, idx, idx2: np.sum(np.sin({expr}) * w)", {"np": np, "w": w})
    np.testing.assert_allclose(vg.jit(f)(X / 50, idx, idx2), f(X / 50, idx, idx2))
    _check_grad(f, X / 50, idx, idx2)


@pytest.mark.parametrize("expr", ["y[0, idx, 1:3] = v", "y[idx, 2] = v", "y[1:3, idx, 0] = v",
                                  "y[idx, :, idx2] = v", "y[::-1, idx, ::2] = v"])
def test_gradient_of_writes_at_mixed_traced_keys(expr):
    idx, idx2 = np.array([3, 0, 1]), np.array([1, 4, 0])
    key = expr.split(" = ")[0][1:]
    shape = eval(f"X{key}", {"X": X, "idx": idx, "idx2": idx2}).shape
    v0 = np.random.default_rng(2).standard_normal(shape)
    ns: dict = {"np": np}
    src = f"def f(x, v, idx, idx2):\n    y = np.sin(x)\n    {expr}\n"
    exec(src + "    return np.sum(y * y * np.cos(x))\n", ns)  # noqa: S102
    f = ns["f"]
    np.testing.assert_allclose(vg.jit(f)(X / 50, v0, idx, idx2), f(X / 50, v0, idx, idx2))
    _check_grad(f, X / 50, v0, idx, idx2, argnums=0)
    _check_grad(f, X / 50, v0, idx, idx2, argnums=1)


def _loop_read(n):
    x = np.random.default_rng(3).standard_normal((n, 5, 4))

    def f(x, idx):
        total = 0.0
        for i in range(x.shape[0]):
            total = total + np.sum(x[i, idx, 1:4] ** 2) + np.sum(np.tanh(x[i, 1:3, idx]))
        return total
    return f, (x, np.array([3, 0, 3]))


def _loop_write(n):
    x = np.random.default_rng(4).standard_normal((n, 5, 4))

    def f(x, idx):
        y = vnp.zeros_like(x)
        for i in range(x.shape[0]):
            y[i, idx, 1:3] = np.tanh(x[i, idx, 1:3])  # (3 twice: the last write wins)
        return np.sum(y * x)
    return f, (x, np.array([3, 0, 3]))


def _loop_rmw(n):
    x = np.random.default_rng(5).standard_normal((n, 5, 4))

    def f(x, idx):
        y = x.copy()
        for i in range(x.shape[0]):
            y[i, 0, idx] += x[i, 1, idx]
        return np.sum(np.sin(y))
    return f, (x, np.array([3, 0, 3]))


@pytest.mark.parametrize("make", [_loop_read, _loop_write, _loop_rmw])
def test_mixed_traced_keys_in_a_loop_batch(make):
    """Each iteration reads or writes its own row at the traced positions: batched (the
    graph does not grow with the trip count), equal to the unbatched graph and to central
    differences."""
    f, args = make(6)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args))
    check(f, args)
    assert_size_independent(make)
