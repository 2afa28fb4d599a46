"""Statistics, scans, sorting, quantiles, NaN-ignoring reductions, logic reductions,
select/piecewise and indexing functions (take, take_along_axis, traced integer indices) of
`vecgrad.numpy` against NumPy, with gradients by central differences."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check
from test_numpy_api import assert_same, check

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(13)
T = R.standard_normal((3, 4, 5))
M = R.standard_normal((4, 6))
V = R.standard_normal(7)
NANS = T.copy()
NANS[0, 1, :] = np.nan
NANS[1, :, 2] = np.nan
NANS[2, 0, 0] = np.nan


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_var_std(name, axis, ddof, keepdims):
    check(lambda xp, x: getattr(xp, name)(x, axis=axis, ddof=ddof, keepdims=keepdims), T)


WHERE = [R.random((3, 4, 5)) > 0.4, R.random((4, 1)) > 0.3, np.zeros((3, 4, 5), bool)]


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
@pytest.mark.parametrize("w", range(len(WHERE)))
def test_var_std_where(name, axis, w):
    """`where=` selects the entries, per position along `axis` (none selected: nan, with
    ddof more than the count: inf or nan, as NumPy), with a constant or a traced mask."""
    mask = WHERE[w]
    counts = np.sum(np.broadcast_to(mask, T.shape), axis=axis)
    for ddof in (0, 1, 4):
        with np.errstate(all="ignore"):  # (gradients where every group has n - ddof > 0)
            check(lambda xp, x, d=ddof: getattr(xp, name)(x, axis=axis, ddof=d, keepdims=True,
                                                        where=mask), T, grad=bool(
                np.all(counts > ddof)))
            want = getattr(np, name)(T, axis=axis, ddof=ddof, where=mask)
            got = vg.jit(lambda x, m, d=ddof: getattr(vnp, name)(x, axis=axis, ddof=d,
                                                               where=m))(T, mask)
        assert_same(got, want)


def test_var_std_dtypes_and_methods():
    check(lambda xp, x: (x.var(), x.std(1), x.var(axis=0, ddof=1, keepdims=True)), T)
    i = np.arange(12).reshape(3, 4)
    assert_same(vg.jit(lambda x: (vnp.var(x), vnp.std(x, 0)))(i), (np.var(i), np.std(i, 0)))
    f = T.astype(np.float32)
    assert_same(vg.jit(lambda x: vnp.var(x, 1))(f), np.var(f, 1), rtol=1e-6)
    assert vg.jit(lambda x: vnp.var(x, 1))(f).dtype == np.float32


def test_var_of_list_of_traced_scalars():
    assert vg.grad(lambda x: vnp.var(vnp.array([x, x + 2])))(np.float64(0.0)) == 0.0
    assert vg.grad(lambda x: vnp.std([x, x * 2]))(np.float64(1.0)) == pytest.approx(0.5)


@pytest.mark.parametrize("fn", [
    lambda xp, x, w: xp.average(x), lambda xp, x, w: xp.average(x, axis=1),
    lambda xp, x, w: xp.average(x, axis=1, weights=w[0, :, 0] ** 2),
    lambda xp, x, w: xp.average(x, weights=w ** 2 + 0.1),
    lambda xp, x, w: xp.average(x, axis=(0, 2), weights=w ** 2, returned=True),
    lambda xp, x, w: xp.average(x, 0, w[:, 0, 0] ** 2 + 1, keepdims=True),
], ids=["plain", "axis", "weights-1d", "weights-full", "returned", "keepdims"])
def test_average(fn):
    check(fn, T, T * 0.5 + 1, argnums=(0, 1))


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.cov(x), lambda xp, x: xp.cov(x, rowvar=False),
    lambda xp, x: xp.cov(x[0], x[1], bias=True), lambda xp, x: xp.cov(x, ddof=0),
    lambda xp, x: xp.cov(x[0]), lambda xp, x: xp.corrcoef(x),
    lambda xp, x: xp.corrcoef(x[0], x[2]), lambda xp, x: xp.ptp(x, 1),
], ids=["cov", "cov-cols", "cov-xy", "cov-ddof", "cov-1d", "corrcoef", "corrcoef-xy", "ptp"])
def test_covariance(fn):
    check(fn, M)


FW, AW = np.array([1, 0, 3, 2, 1, 2]), np.array([0.5, 1.5, 0.2, 1.0, 2.0, 0.7])


@pytest.mark.parametrize("kw", [{"fweights": FW}, {"aweights": AW}, {"fweights": FW, "aweights": AW},
                                {"aweights": AW, "ddof": 0}, {"fweights": FW, "ddof": 2},
                                {"aweights": AW, "bias": True}])
def test_covariance_weights(kw):
    """NumPy's weighted mean and normalization (ddof counts weighted samples)."""
    check(lambda xp, x: xp.cov(x, **kw), M)
    check(lambda xp, x: xp.cov(x[0], x[1], **kw), M)
    with pytest.raises(TypeError, match="integer"):
        vg.jit(lambda x: vnp.cov(x, fweights=AW))(M)
    with pytest.raises(ValueError, match="negative"):
        vg.jit(lambda x: vnp.cov(x, aweights=-AW))(M)
    check(lambda xp, x, w: xp.cov(x, aweights=w, ddof=kw.get("ddof")), M, AW)  # (traced:
    #                                                         test_checked_weights.py)


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.cumsum(x), lambda xp, x: xp.cumsum(x, 1), lambda xp, x: xp.cumsum(x, -1),
    lambda xp, x: xp.cumprod(x, 0), lambda xp, x: xp.cumprod(x * 0.5, axis=2),
    lambda xp, x: xp.cumsum(x, axis=1, dtype=np.float64),
    lambda xp, x: x.cumsum(1) + x.cumprod(0), lambda xp, x: xp.cumulative_sum(x, axis=1),
    lambda xp, x: xp.cumulative_prod(x, axis=0, include_initial=True),
    lambda xp, x: xp.cumulative_sum(x[0, 0], include_initial=True),
    lambda xp, x: xp.nancumsum(x, 1), lambda xp, x: xp.nancumprod(x, 2),
], ids=["cumsum", "cumsum1", "cumsum-neg", "cumprod", "cumprod2", "cumsum-dtype", "methods",
        "cumulative_sum", "cumulative_prod-initial", "cumulative_sum-1d", "nancumsum",
        "nancumprod"])
def test_scans(fn):
    check(fn, T, rtol=1e-6)


def test_cumprod_gradient_with_zeros_is_exact():
    x = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 1.5, -2.0, 4.0, 0.5]])
    w = R.standard_normal(x.shape)
    g = vg.grad(lambda x: vnp.sum(vnp.cumprod(x, 1) * w))(x)
    eps = 1e-6
    want = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        want[i] = (np.sum(np.cumprod(x + d, 1) * w) - np.sum(np.cumprod(x - d, 1) * w)) / 2 / eps
    np.testing.assert_allclose(g, want, rtol=1e-7, atol=1e-9)


def test_scan_float32():
    f = T.astype(np.float32)
    assert_same(vg.jit(lambda x: vnp.cumsum(x, 1, dtype=np.float64))(f),
                np.cumsum(f, 1, dtype=np.float64))
    assert vg.grad(lambda x: vnp.sum(vnp.cumprod(x, 2)))(f).dtype == np.float32


def test_scan_dtypes():
    b = T > 0
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    for x in (b, i):
        assert_same(vg.jit(lambda x: (vnp.cumsum(x, 1), vnp.cumprod(x, 0)))(x),
                    (np.cumsum(x, 1), np.cumprod(x, 0)))


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.diff(x), lambda xp, x: xp.diff(x, 2, axis=0), lambda xp, x: xp.diff(x, 3),
    lambda xp, x: xp.diff(x, axis=1, prepend=0.0), lambda xp, x: xp.diff(x, append=x[..., :1]),
    lambda xp, x: xp.diff(x, n=0), lambda xp, x: xp.diff(x > 0),
    lambda xp, x: xp.ediff1d(x[0]), lambda xp, x: xp.ediff1d(x, to_begin=[1.0, 2.0], to_end=x[0, 0]),
    lambda xp, x: xp.gradient(x), lambda xp, x: xp.gradient(x, axis=1),
    lambda xp, x: xp.gradient(x, 0.5, edge_order=2), lambda xp, x: xp.gradient(x, 1.0, 2.0, 0.5),
    lambda xp, x: xp.gradient(x[0, 0]),
], ids=["diff", "diff2", "diff3", "prepend", "append", "n0", "bool", "ediff1d",
        "ediff1d-ends", "gradient", "gradient-axis", "gradient-edge2", "gradient-spacing",
        "gradient-1d"])
def test_differences(fn):
    check(fn, T)


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.sort(x), lambda xp, x: xp.sort(x, 0), lambda xp, x: xp.sort(x, None),
    lambda xp, x: xp.sort(x, axis=1, kind="stable"), lambda xp, x: xp.sort(x, stable=True),
    lambda xp, x: xp.partition(x, 2), lambda xp, x: xp.partition(x, (0, 3), axis=1),
    lambda xp, x: xp.partition(x, -1, axis=0)[-1], lambda xp, x: xp.partition(x, 4, None)[4],
    lambda xp, x: xp.sort(x)[..., ::2] * 2 + xp.sort(x * x, 1)[:, :1, :3],
], ids=["sort", "sort0", "sort-flat", "stable", "stable-kw", "partition", "partition-two",
        "partition-last", "partition-flat", "composed"])
def test_sort_and_partition(fn):
    check(fn, T)


def test_partition_kth_positions_match_numpy():
    x = R.standard_normal((4, 9))
    got = vg.jit(lambda x: vnp.partition(x, (2, 6), axis=1))(x)
    want = np.partition(x, (2, 6), axis=1)
    np.testing.assert_array_equal(got[:, [2, 6]], want[:, [2, 6]])
    assert (got[:, :2] <= got[:, 2:3]).all() and (got[:, 7:] >= got[:, 6:7]).all()


def test_sort_gradient_with_ties_is_a_subgradient():
    x = np.array([3.0, 1.0, 3.0, 2.0])
    g = vg.grad(lambda x: vnp.sort(x)[-1] + 2 * vnp.sort(x)[0])(x)
    assert g.sum() == 3.0 and g[1] == 2.0 and sorted(g[[0, 2]]) == [0.0, 1.0]


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.argsort(x), lambda xp, x: xp.argsort(x, 0, kind="stable"),
    lambda xp, x: xp.argsort(x, axis=None), lambda xp, x: xp.argmax(x),
    lambda xp, x: xp.argmax(x, 1), lambda xp, x: xp.argmin(x, -1, keepdims=True),
    lambda xp, x: xp.argmin(x, keepdims=True), lambda xp, x: x.argmax(axis=0),
    lambda xp, x: xp.nanargmax(x, 2), lambda xp, x: xp.nanargmin(x),
    lambda xp, x: xp.searchsorted(xp.sort(x[0, 0]), x[1]),
    lambda xp, x: xp.searchsorted(xp.sort(x[0, 0]), x[1, 0], side="right"),
    lambda xp, x: x.argsort(1), lambda xp, x: xp.count_nonzero(x > 0, axis=1),
], ids=["argsort", "argsort0", "argsort-flat", "argmax", "argmax1", "argmin-kd",
        "argmin-kd-all", "argmax-method", "nanargmax", "nanargmin", "searchsorted",
        "searchsorted-right", "argsort-method", "count_nonzero"])
def test_integer_valued(fn):
    x = np.round(T * 2)  # ties
    check(lambda xp, x: fn(xp, x if "stable" in str(fn.__code__.co_consts) else x + T * 1e-3),
          x, grad=False)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("axis", [None, 0, 2, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_median(name, axis, keepdims):
    check(lambda xp, x: getattr(xp, name)(x, axis=axis, keepdims=keepdims), T)
    check(lambda xp, x: getattr(xp, name)(x[:, :3], axis=axis, keepdims=keepdims), T)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint",
                                    "hazen", "weibull", "median_unbiased", "normal_unbiased",
                                    "interpolated_inverted_cdf"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_methods(method, name):
    q = np.array([0.0, 0.1, 0.5, 0.73, 1.0])
    check(lambda xp, x: getattr(xp, name)(x, q, axis=1, method=method), T)
    check(lambda xp, x: getattr(xp, name)(x, 0.3, axis=(0, 2), method=method, keepdims=True), T)


@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_inverted_cdf_quantiles_with_and_without_weights(axis):
    """NumPy's inverted_cdf: the first sorted entry whose cumulative weight reaches q (zero
    weights skipped, ties in NumPy's sort order); unweighted, all weights 1."""
    x = np.round(T * 2) / 2  # (ties)
    shape = T.shape if axis is None else tuple(T.shape[i] for i in np.atleast_1d(axis))
    w = R.integers(0, 3, shape).astype(float)
    w.flat[0], w.flat[-1] = 0.0, 2.0
    q = np.array([0.0, 0.2, 0.5, 1.0])
    for kw in ({}, {"weights": w}):
        for data in (T, x):  # (gradients where no tie makes the choice a kink)
            check(lambda xp, d, k=kw: xp.quantile(d, q, axis=axis, method="inverted_cdf", **k),
                  data, grad=data is T)
            check(lambda xp, d, k=kw: xp.percentile(d, 35, axis=axis, method="inverted_cdf",
                                                    keepdims=True, **k), data, grad=data is T)
        with np.errstate(all="ignore"):
            assert_same(vg.jit(lambda d, k=kw: vnp.quantile(d, 0.6, axis=axis,
                                                            method="inverted_cdf", **k))(NANS),
                        np.quantile(NANS, 0.6, axis=axis, method="inverted_cdf", **kw))
    for kw, err in [({"method": "linear", "weights": w}, "inverted_cdf"),
                    ({"method": "inverted_cdf", "weights": -w}, "non-negative"),
                    ({"method": "inverted_cdf", "weights": 0 * w}, "all zero")]:
        with pytest.raises(ValueError, match=err):
            vg.jit(lambda x, k=kw: vnp.quantile(x, 0.5, axis=axis, **k))(T)
    with pytest.raises(NotImplementedError, match="traced weights"):
        vg.jit(lambda x, v: vnp.quantile(x, 0.5, axis=axis, method="inverted_cdf", weights=v))(
            T, w)


def test_percentile_and_float32():
    check(lambda xp, x: (xp.percentile(x, 30), xp.percentile(x, [10, 90], axis=-1),
                         xp.nanpercentile(x, 50, axis=0)), T)
    f = T.astype(np.float32)
    assert_same(vg.jit(lambda x: vnp.quantile(x, 0.3, axis=1))(f), np.quantile(f, 0.3, axis=1),
                rtol=1e-6)


@pytest.mark.parametrize("name", ["median", "quantile", "percentile"])
def test_quantiles_of_nan_data_are_nan_like_numpy(name):
    args = () if name == "median" else (0.4,) if name == "quantile" else (40,)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(NANS, *args, axis=2)
    assert_same(vg.jit(lambda x: getattr(vnp, name)(x, *args, axis=2))(NANS), want)


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.nansum(x), lambda xp, x: xp.nansum(x, 1),
    lambda xp, x: xp.nanprod(x, axis=2), lambda xp, x: xp.nanmean(x, 2),
    lambda xp, x: xp.nanvar(x, 2, ddof=1), lambda xp, x: xp.nanstd(x, axis=(0, 2)),
    lambda xp, x: xp.nanmax(x, 2), lambda xp, x: xp.nanmin(x, 1, keepdims=True),
    lambda xp, x: xp.nanmedian(x, 2), lambda xp, x: xp.nanquantile(x, [0.2, 0.9], axis=1),
    lambda xp, x: xp.nanpercentile(x, 35, axis=0),
], ids=["nansum", "nansum1", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
        "nanmedian", "nanquantile", "nanpercentile"])
def test_nan_reductions(fn):
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(np, NANS)
            got = vg.jit(lambda x: fn(vnp, x))(NANS)
    assert_same(got, want)
    w = R.standard_normal(np.shape(want))
    g = vg.grad(lambda x: vnp.nansum(fn(vnp, x) * w))(NANS)
    assert np.all(g[np.isnan(NANS)] == 0) and np.all(np.isfinite(g))
    clean = T + 0.0  # gradient check where there are no NaNs
    central_diff_check(lambda x: vnp.sum(fn(vnp, x) * w), [clean])


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.all(x > -1), lambda xp, x: xp.any(x > 2, axis=1),
    lambda xp, x: xp.all(x, axis=(0, 2), keepdims=True), lambda xp, x: xp.any(x[:, :0], 1),
    lambda xp, x: xp.all(x[:0]), lambda xp, x: (x > 0).any(), lambda xp, x: (x > 0).all(-1),
    lambda xp, x: xp.logical_and.reduce(x > 0, axis=0), lambda xp, x: np.all(x > 0, axis=1),
], ids=["all", "any1", "all-kd", "any-empty-axis", "all-empty", "method-any", "method-all",
        "logical_and.reduce", "np.all"])
def test_logic_reductions(fn):
    check(fn, T, grad=False)


def test_select_and_piecewise():
    def f(xp, x):
        s = xp.select([x < -0.5, x > 0.5], [x ** 2, xp.sin(x)], default=0.1)
        p = xp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 3])
        q = xp.piecewise(x, [x < -1, x > 1], [0.0, lambda v: xp.sqrt(v), 7.0])
        return s, p, q
    check(f, T)


def test_piecewise_gradient_is_not_nan_outside_each_branch():
    g = vg.grad(lambda x: vnp.sum(vnp.piecewise(x, [x < 0, x >= 0],
                                                 [lambda v: vnp.sqrt(-v), vnp.sqrt])))(T)
    np.testing.assert_allclose(g, np.where(T < 0, -0.5 / np.sqrt(-T), 0.5 / np.sqrt(T)))


def test_select_errors():
    with pytest.raises(TypeError):
        vg.jit(lambda x: vnp.select([x], [x]))(T)
    with pytest.raises(ValueError):
        vg.jit(lambda x: vnp.select([x > 0], [x, x]))(T)


# ------------------------------------------------------------------------------- indexing

@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.take(x, [0, 3, 3]), lambda xp, x: xp.take(x, [[1, 0], [2, 2]], axis=1),
    lambda xp, x: xp.take(x, np.array([-1, 7]), axis=2, mode="wrap"),
    lambda xp, x: xp.take(x, [0, 9], axis=0, mode="clip"), lambda xp, x: x.take([1, 2], 2),
    lambda xp, x: xp.take_along_axis(x, np.argsort(T, 2), 2),
    lambda xp, x: xp.take_along_axis(x, np.array([[[0], [2], [1], [1]]]), axis=1),
    lambda xp, x: xp.take_along_axis(x[0, 0], np.array([3, 3, 0]), None),
    lambda xp, x: xp.compress([True, False, True], x, axis=0),
    lambda xp, x: x.compress([False, True], axis=2), lambda xp, x: xp.extract(T > 0, x),
    lambda xp, x: xp.choose(np.array([[0, 1, 2, 1, 0]]), [x[0], x[1], x[2]]),
], ids=["take-flat", "take-2d", "take-wrap", "take-clip", "take-method", "along-argsort",
        "along-bcast", "along-none", "compress", "compress-method", "extract", "choose"])
def test_static_index_functions(fn):
    check(fn, T)


@pytest.mark.parametrize("fn", [
    lambda xp, x, i: x[i], lambda xp, x, i: x[:, i], lambda xp, x, i: x[..., i[:3]],
    lambda xp, x, i: x[i.reshape(2, 2)], lambda xp, x, i: x[:, :, i % 5],
    lambda xp, x, i: xp.take(x, i, axis=1), lambda xp, x, i: xp.take(x, i + 5, 2, mode="wrap"),
    lambda xp, x, i: xp.take_along_axis(x, xp.argsort(x, 1), 1),
    lambda xp, x, i: xp.take_along_axis(x, i.reshape(1, 4, 1) % 4, axis=1),
    lambda xp, x, i: x.take(i, axis=0, mode="clip"),
    lambda xp, x, i: xp.choose(i.reshape(2, 2) % 3, [x[0, :2, :2], x[1, :2, :2], 1.0]),
], ids=["rows", "cols", "last-ellipsis", "2d-index", "computed-index", "take",
        "take-wrap", "along-argsort", "along-bcast", "take-clip", "choose"])
def test_traced_integer_indices(fn):
    idx = np.array([2, 0, 2, 1])

    def f(xp, x, i):
        return fn(xp, x, i)
    want = f(np, T, idx)
    got = vg.jit(lambda x, i: f(vnp, x, i))(T, idx)
    assert_same(got, want)
    w = R.standard_normal(np.shape(want))
    central_diff_check(lambda x, i: vnp.sum(f(vnp, x, i) * w), [T, idx])


def test_add_at_with_a_traced_index_is_a_segment_sum():
    edges = np.array([[0, 1], [1, 2], [2, 0], [0, 2], [1, 1]])

    def f(x, e):
        msg = x[e[:, 0]] * 2.0
        agg = vnp.zeros_like(x)
        np.add.at(agg, e[:, 1], msg)
        return agg

    def ref(x, e):
        agg = np.zeros_like(x)
        np.add.at(agg, e[:, 1], x[e[:, 0]] * 2.0)
        return agg
    x = R.standard_normal((3, 4))
    assert_same(vg.jit(f)(x, edges), ref(x, edges))
    w = R.standard_normal((3, 4))
    central_diff_check(lambda x, e: vnp.sum(f(x, e) * w), [x, edges])


def test_traced_index_errors():
    with pytest.raises(IndexError, match="integer"):  # (NumPy's error for a float index)
        vg.jit(lambda x, i: x[i, 1:3, 0])(T, np.array([0.0, 1.0]))
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda x: x[x > 0])(T)
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda x: vnp.nonzero(x))(T)
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda x: np.where(x > 0))(T)
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda x: np.unique(x))(T)


def test_in_place_index_writers():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        xp.put(buf, [0, 5, 11], x[0, :3])
        buf.put([1, 2], x[1, 0])
        xp.put_along_axis(buf, np.array([[3], [1], [0]]), x[:, 2:3, 0], axis=1)
        xp.copyto(buf[2], x[2, 0, 0])
        xp.putmask(buf, x[:3, :4, 0] > 0, 9.0)
        xp.place(buf, np.eye(3, 4, dtype=bool), x[0, 1:3].ravel())
        return buf
    check(f, T)


@pytest.mark.parametrize("axis, k", [(1, 1), (0, 2), (-1, 3), (2, 2)])
def test_put_along_axis_at_traced_indices(axis, k):
    """An argsort's first k positions overwritten (with constants, or with values computed
    from the input): NumPy's values, and the gradient through the values written and the
    entries kept."""
    def f(xp, x, vals):
        buf = x * 1.0
        idx = xp.take(xp.argsort(x, axis=axis), range(k), axis=axis)
        xp.put_along_axis(buf, idx, vals(xp, x, idx), axis=axis)
        return buf
    for vals in (lambda xp, x, i: -1.0,
                 lambda xp, x, i: xp.take_along_axis(x, i, axis) ** 2 + 1.0):
        check(lambda xp, x, vals=vals: f(xp, x, vals), T)
        vg.check_grads(lambda x, vals=vals: vnp.sum(f(vnp, x, vals) ** 2), [T])
    with pytest.raises(IndexError, match="integer"):
        vg.jit(lambda x: vnp.put_along_axis(x * 1, vnp.argmax(x, 0) * 1.0, 0.0, 0))(T)


@pytest.mark.parametrize("kw", [
    {}, {"bins": 4}, {"bins": 7, "range": (-1.0, 1.5)}, {"bins": [-2.0, -0.5, 0.0, 0.3, 2.0]},
    {"bins": 5, "density": True}, {"bins": [-1.0, 0.0, 1.0], "density": True},
    {"bins": 3, "range": (0.0, 0.0)},
], ids=["default", "bins", "range", "edges", "density", "edges-density", "empty-range"])
def test_histogram(kw):
    x = np.round(T * 4) / 4  # values on bin edges too
    check(lambda xp, x: xp.histogram(x, **kw), x, grad=False)
    w = np.abs(R.standard_normal(x.shape)) + 0.1
    check(lambda xp, x, w: xp.histogram(x, weights=w, **kw)[0], x, w, argnums=1)
    check(lambda xp, x: xp.histogram_bin_edges(x, **{k: v for k, v in kw.items()
                                                      if k != "density"}), T)


PTS = np.round(R.standard_normal((60, 3)) * 4) / 4  # (values on bin edges too)


def _flat(hist, edges):
    return (hist, *edges)


@pytest.mark.parametrize("kw", [
    {}, {"bins": (3, 4, 2)}, {"bins": 4, "range": [(-1.0, 1.0), None, (0.0, 3.0)]},
    {"bins": [np.linspace(-2, 2, 5), 3, np.array([-1.0, 0.0, 0.5, 2.0])]},
    {"bins": 5, "density": True}, {"bins": 2, "range": [(0.0, 0.0)] * 3},
], ids=["default", "bins", "range", "edges", "density", "empty-range"])
def test_histogramdd_and_histogram2d(kw):
    """NumPy's bin search per dimension (the last edge in the last bin), outliers dropped."""
    check(lambda xp, p: _flat(*xp.histogramdd(p, **kw)), PTS, grad=False)
    w = np.abs(R.standard_normal(60)) + 0.1
    check(lambda xp, p, w: xp.histogramdd(p, weights=w, **kw)[0], PTS, w, argnums=1)
    check(lambda xp, p: tuple(xp.histogramdd([p[:, 0], p[:, 2], p[:, 1]], **kw)[1]),
          R.standard_normal((60, 3)))  # (edges from the data's range: no tied extremes)
    kw2 = {k: v[:2] if isinstance(v, list | tuple) and len(v) == 3 else v
           for k, v in kw.items()}
    check(lambda xp, p, w: xp.histogram2d(p[:, 0], p[:, 1], weights=w, **kw2), PTS, w,
          argnums=1)
    with pytest.raises(ValueError, match="dimension of bins"):
        vg.jit(lambda p: vnp.histogramdd(p, bins=(2, 3)))(PTS)


def test_histogram_outer_edges_as_numpy():
    """One rule for histogram and histogramdd (NumPy's _get_outer_edges): float32 data give
    float32 edges, no data gives the edges of (0, 1), a non-finite range is NumPy's
    ValueError (histogramdd's edges were float64, histogram raised on no data and gave NaN
    edges for an infinite range)."""
    x = R.standard_normal((20, 2)).astype(np.float32)
    check(lambda xp, a: tuple(xp.histogramdd(a, 3)[1]), x, grad=False)
    check(lambda xp, a: xp.histogram(a[:, 0], 3), x, grad=False)
    for empty in (np.array([]), np.array([], np.float32), np.array([], np.int64)):
        check(lambda xp, a: xp.histogram(a, 4), empty, grad=False)
        check(lambda xp, a: tuple(xp.histogramdd(a, 2)[1]), empty.reshape(0, 1), grad=False)
    for f, data in ((lambda a: vnp.histogram(a, 3, range=(0, np.inf)), x[:, 0]),
                    (lambda a: vnp.histogramdd(a, 3, range=[(0, 1), (-np.inf, 0)]), x)):
        with pytest.raises(ValueError, match="not finite"):
            vg.jit(f)(data)
