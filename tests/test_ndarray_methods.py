"""Every name of `dir(numpy.ndarray)` is decided for traced arrays (numpy/_ndarray.py's
NDARRAY_API), and the methods behave as NumPy's: results, in-place methods, views, and typed
errors (with the user's line) where a value would be needed."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from test_numpy_api import check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.numpy._ndarray import NDARRAY_API
from vecgrad.tracing import Tracer

R = np.random.default_rng(17)
T = R.standard_normal((3, 4, 5))
M = R.standard_normal((3, 4))


def test_every_ndarray_name_is_decided():
    undecided = sorted(set(dir(np.ndarray)) - set(NDARRAY_API) - set(dir(object)))
    assert not undecided, f"ndarray names without a decision in NDARRAY_API: {undecided}"
    missing = sorted(n for n, kind in NDARRAY_API.items()
                     if kind != "absent" and n in dir(np.ndarray) and n not in dir(Tracer))
    assert not missing, f"decided but not provided on Tracer: {missing}"
    for n, kind in NDARRAY_API.items():
        if kind == "absent":
            assert n not in dir(Tracer), n


@pytest.mark.parametrize("method", [
    lambda x: x.all(), lambda x: (x > 0).any(axis=1), lambda x: x.argmax(),
    lambda x: x.argmin(axis=2), lambda x: x.argsort(1), lambda x: x.argpartition(2, axis=0),
    lambda x: x.cumsum(), lambda x: x.cumprod(1), lambda x: x.diagonal(),
    lambda x: x.diagonal(1, 1, 2), lambda x: x.repeat(2, axis=1), lambda x: x.round(1),
    lambda x: x.std(), lambda x: x.var(axis=1, ddof=1), lambda x: x.take([0, 2], axis=1),
    lambda x: x.trace(), lambda x: x.clip(-0.5, 0.5), lambda x: x.clip(min=0),
    lambda x: x.compress([True, False, True], axis=0), lambda x: x.mT,
    lambda x: x.searchsorted(0.5) if x.ndim == 1 else x[0, 0].searchsorted(x[1, 1]),
    lambda x: x.astype(np.float64, copy=False),
    lambda x: x.view(), lambda x: x.copy(order="C"), lambda x: copy.copy(x),
    lambda x: copy.deepcopy(x), lambda x: x.flat[7], lambda x: x.flat[2:9:3],
    lambda x: list(x.flat)[5] * 1.0, lambda x: x.real, lambda x: x.conj(),
], ids=lambda f: None)
def test_methods_match_numpy(method):
    if "real" in method.__code__.co_names or "conj" in method.__code__.co_names:
        pytest.importorskip("vecgrad.numpy").__dict__.get("real") or pytest.skip(
            "real/imag/conj come with the complex-number support")
    grad = method(T).dtype.kind == "f" if isinstance(method(T), np.ndarray) else True
    check(lambda xp, x: method(x), T, grad=grad and "argsort" not in str(method), rtol=1e-6)


def test_attributes():
    seen = {}

    def f(x):
        seen.update(itemsize=x.itemsize, nbytes=x.nbytes, len=len(x), flat=len(x.flat),
                    device=x.device, base=x.base, viewbase=x[0].base is x,
                    writeable=x.flags.writeable, owndata=x.flags.owndata)
        return x * 1.0
    vg.jit(f)(T.astype(np.float32))
    assert seen == {"itemsize": 4, "nbytes": 240, "len": 3, "flat": 60, "device": "cpu", "base": None,
                        "viewbase": True, "writeable": False, "owndata": True}
    assert vg.jit(lambda x: x.__array_namespace__() is vnp)(T)


def test_in_place_methods():
    def f(xp, x):
        a = x * 1.0
        a.sort()
        b = x * 1.0
        b.sort(axis=0)
        c = x * 1.0
        c.partition(2, axis=1)
        c = c[:, 2]
        d = xp.zeros((3, 4))
        d.fill(x[0, 0, 0])
        d.put([0, 5], x[1, 1, :2])
        e = xp.zeros(6)
        e.flat[::2] = x[0, 0, :3]
        v = d.view()
        v[2, 2] = x[2, 2, 2]  # a view: d sees it
        return a, b, c, d, e
    check(f, T)


def test_setflags_makes_read_only():
    def f(x):
        y = x * 1.0
        y.setflags(write=False)
        y[0] = 1.0  # <- error
        return y
    with pytest.raises(vg.ReadOnlyError):
        vg.jit(f)(M)


@pytest.mark.parametrize("call", [
    lambda x: x.item(), lambda x: x[0, 0].item(), lambda x: x.tolist(), lambda x: 0.5 in x,
    lambda x: x.tobytes(), lambda x: f"{x[0, 0]:.3f}", lambda x: bool(x[0, 0]),
    lambda x: float(x[0, 0]), lambda x: int(x[0, 0]), lambda x: x.dumps(),
    lambda x: [1, 2, 3][x[0, 0].astype(int)],
], ids=["item", "item-0d", "tolist", "contains", "tobytes", "format", "bool", "float", "int",
        "dumps", "index"])
def test_methods_that_need_values_raise_concretization_error(call):
    with pytest.raises(vg.ConcretizationError) as info:
        vg.jit(call)(M)
    assert f"test_ndarray_methods.py:{call.__code__.co_firstlineno}" in str(info.value)


@pytest.mark.parametrize("call,exc", [
    (lambda x: x.strides, NotImplementedError), (lambda x: x.byteswap(), NotImplementedError),
    (lambda x: x.resize((2, 6)), NotImplementedError), (lambda x: x.data, TypeError),
    (lambda x: x.view(np.int64), NotImplementedError), (lambda x: x.__dlpack__(), TypeError),
    (lambda x: x.copy().__delitem__(0), ValueError), (lambda x: x.to_device("gpu"),
                                                      NotImplementedError),
], ids=["strides", "byteswap", "resize", "data", "view-dtype", "dlpack", "delitem",
        "to_device"])
def test_layout_methods_raise_typed_errors(call, exc):
    with pytest.raises(exc):
        vg.jit(call)(M)


def test_round_builtin_as_numpy_scalars():
    got = vg.jit(lambda x: round(vnp.sum(x), 2) + round(x[0, 0] * 3, 1))(M)
    np.testing.assert_allclose(got, round(np.sum(M), 2) + round(M[0, 0] * 3, 1))
    with pytest.raises(vg.ConcretizationError):
        vg.jit(lambda x: round(vnp.sum(x)))(M)
    with pytest.raises(TypeError):
        vg.jit(lambda x: round(x, 1))(M)


def test_format_without_spec_and_generic_alias():
    assert vg.jit(lambda x: (f"{x}".startswith("Tracer"), x * 1.0)[1])(M).shape == M.shape
    assert Tracer[np.float64] is not None


@pytest.mark.parametrize("other", [None, "abc", b"x"])
def test_equality_with_none_or_a_string_is_elementwise_as_numpy(other):
    """NumPy compares elementwise against an object of another kind: all False for `==`, all
    True for `!=` (a 0-d array gives a NumPy bool); vecgrad raised a TypeError."""
    x = np.arange(6.0).reshape(2, 3)
    got = vg.jit(lambda a: (a == other, a != other, a[0, 0] == other,
                            vnp.where(a != other, a, 0.0)))(x)
    want = (x == other, x != other, x[0, 0] == other, np.where(x != other, x, 0.0))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
