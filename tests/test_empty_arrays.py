"""Zero-size arrays, empty slices and zero-trip loops against NumPy: results (nan, -inf,
empty shapes), dtypes and errors are NumPy's, also where a rewrite (a fused softmax or
logsumexp, which shift by a max) would take the max of nothing."""
import warnings

import numpy as np
import pytest

import vecgrad as vg

E = np.zeros((0, 3))
X = np.arange(6.0).reshape(2, 3)
CASES = {
    "sum": lambda E, x: np.sum(E, axis=0), "sum1": lambda E, x: np.sum(E, axis=1),
    "prod": lambda E, x: np.prod(E, axis=0), "mean": lambda E, x: np.mean(E, axis=0),
    "max_error": lambda E, x: np.max(E, axis=0), "max_of_rows": lambda E, x: np.max(E, axis=1),
    "max_initial": lambda E, x: np.max(E, axis=0, initial=-1.0),
    "argmax_error": lambda E, x: np.argmax(E, axis=0), "std": lambda E, x: np.std(E, axis=0),
    "var_ddof": lambda E, x: np.var(x, axis=0, ddof=2), "cumsum": lambda E, x: np.cumsum(E, 0),
    "concatenate": lambda E, x: np.concatenate([E, x]),
    "stack_empty_slices": lambda E, x: np.stack([x[i, 3:] for i in range(2)]),
    "matmul": lambda E, x: E @ x.T, "matmul_k0": lambda E, x: E.T @ E,
    "einsum": lambda E, x: np.einsum("ij,kj->ik", E, x),
    "median": lambda E, x: np.median(E, axis=0), "nanmedian": lambda E, x: np.nanmedian(E, 0),
    "median_rows": lambda E, x: np.median(E.T, axis=0),
    "median_all": lambda E, x: np.median(E), "norm": lambda E, x: np.linalg.norm(E),
    "softmax": lambda E, x: np.exp(E) / np.sum(np.exp(E), axis=0),
    "logsumexp": lambda E, x: np.log(np.sum(np.exp(E), axis=0)),
    "zero_trip": lambda E, x: sum(x[i] for i in range(0)) + x[0],
    "empty_slices_in_a_loop": lambda E, x: sum(np.sum(x[:, i:i]) for i in range(3)),
    "mean_of_empty_slice": lambda E, x: np.mean(x[:, 1:1], axis=1),
    "nanmean_all_nan": lambda E, x: np.nanmean(np.where(x > 10, x, np.nan), axis=0),
    "min_error": lambda E, x: np.min(x[:, :0]), "all": lambda E, x: np.all(E > 0, axis=0),
    "any": lambda E, x: np.any(E > 0), "dot": lambda E, x: np.dot(x[0, :0], x[1, :0]),
    "average_zero_weights": lambda E, x: np.average(x, axis=0, weights=[0.0, 0.0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_numpy(name):
    f = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want, werr = np.asarray(f(E, X)), None
        except Exception as e:  # noqa: BLE001 - NumPy's error is the expectation
            want, werr = None, type(e)
        if werr is not None:
            with pytest.raises(werr):
                vg.jit(f)(E, X)
            return
        got = np.asarray(vg.jit(f)(E, X))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", [np.median, np.nanmedian])
@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((0, 3), None), ((3, 0), 0),
                                        ((0, 3), 1), ((2, 0, 3), (0, 1))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_median_of_nothing_is_nan(fn, shape, axis, dtype):
    a = np.zeros(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(fn(a, axis=axis))
        got = np.asarray(vg.jit(lambda a: fn(a, axis=axis))(a))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
