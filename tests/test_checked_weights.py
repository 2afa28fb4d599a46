"""Weights NumPy checks by their values, traced: np.cov with traced aweights / fweights (NumPy's
weighted mean and normalization; its TypeError for fweights that are not integers, its
ValueError for negative weights) and np.average with traced weights (its ZeroDivisionError
where they sum to zero), each checked where the compiled code runs (P.nonempty), naming the
user's line. Values and dtypes as NumPy's, gradients with respect to the data and the weights
by central differences, per sample in loops (batched = unbatched)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(19)
X0, A0 = R.standard_normal((3, 7)), R.random(7) + 0.2
FW = np.array([1.0, 2.0, 0.0, 3.0, 1.0, 1.0, 2.0])  # (NumPy multiplies float fweights in place)

# (each a function of X (3, 7) and a (7,) positive)
COVS = [
    "np.cov(X, aweights=a)", "np.cov(X, aweights=np.exp(a))", "np.cov(X, aweights=a, ddof=0)",
    "np.cov(X, aweights=a, bias=True)", "np.cov(X.T, rowvar=False, aweights=a)",
    "np.cov(X, fweights=FW.copy(), aweights=a)", "np.cov(X, fweights=np.round(a * 3) + 1)",
    "np.cov(X, fweights=np.round(a * 3) + 1, aweights=a ** 2, ddof=2)", "np.cov(X[0], aweights=a)",
    "np.cov(X[0], X[1], aweights=a)", "np.cov(X, aweights=a, ddof=3)",
    "np.corrcoef(X)[0, 1] * np.cov(X, aweights=a)[0, 1]", "np.cov(X.astype(np.float32), aweights=a)",
    "np.average(X, axis=1, weights=a)", "np.average(X, axis=1, weights=a, returned=True)[1]",
    "np.average(X, axis=0, weights=X ** 2 + 0.1)", "np.average(X[0], weights=a)",
    "np.average(X, axis=1, weights=a, keepdims=True)",
]
RAISES = [
    ("np.cov(X, aweights=a - 0.5)", ValueError, "aweights cannot be negative"),
    ("np.cov(X, fweights=a)", TypeError, "fweights must be integer"),
    ("np.cov(X, fweights=np.round(a) - 1)", ValueError, "fweights cannot be negative"),
    ("np.cov(X, aweights=a * 0)", ZeroDivisionError, "Weights sum to zero"),
    ("np.average(X, axis=1, weights=a * (np.arange(7) > 9))", ZeroDivisionError,
     "Weights sum to zero"),
    ("np.average(X, axis=0, weights=X * (X[0] > 9))", ZeroDivisionError, "Weights sum to zero"),
]


def _fn(expr):
    return eval(f"lambda X, a: {expr}", {"np": np, "FW": FW})


@pytest.mark.parametrize("expr", COVS)
def test_traced_weights_are_numpys(expr):
    f = _fn(expr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (ddof=3 of 7 weighted samples: NumPy warns)
        assert_same(vg.jit(f)(X0, A0), f(X0, A0.copy()), rtol=1e-11)
    if "float32" in expr:
        return
    w = R.standard_normal(np.shape(f(X0, A0)))
    vg.check_grads(lambda X, a: vnp.sum(f(X, a) * w), (X0, A0), argnums=(0, 1), rtol=1e-6,
                   atol=1e-8)


@pytest.mark.parametrize("expr,err,msg", RAISES)
def test_weights_numpy_refuses_raise_its_error_at_the_users_line(expr, err, msg):
    f = _fn(expr)
    with pytest.raises(err, match=msg):
        f(X0, A0.copy())
    with pytest.raises(err, match=msg + r".* \(at <string>:1\)"):
        vg.jit(f)(X0, A0)


def test_the_checks_run_each_call():
    f = vg.jit(lambda X, a: np.cov(X, aweights=a))
    assert_same(f(X0, A0), np.cov(X0, aweights=A0), rtol=1e-12)
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        f(X0, A0 - 0.5)
    assert_same(f(X0 * 2, A0 + 1), np.cov(X0 * 2, aweights=A0 + 1), rtol=1e-12)


def _per_sample(xp, X, A):
    return xp.stack([np.cov(x.reshape(3, 7), aweights=a)[0] + np.average(x[:7], weights=a)
                     for x, a in zip(X, A)])


def test_weighted_covariances_per_sample_batch_to_numpy():
    X, A = R.standard_normal((5, 21)), R.random((5, 7)) + 0.1
    assert_same(vg.jit(lambda x, a: _per_sample(vnp, x, a))(X, A), _per_sample(np, X, A),
                rtol=1e-11)

    def loss(x, a):
        return vnp.sum(_per_sample(vnp, x, a) ** 2)
    vg.check_grads(loss, (X, A), argnums=(0, 1), rtol=1e-6, atol=1e-8)
    e, leaves = entry(loss, (X, A), argnums=(0, 1))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    A2 = A.copy()
    A2[3, 2] = -1.0  # (one sample's weights refused: NumPy raises, so does the batched code)
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        vg.jit(lambda x, a: _per_sample(vnp, x, a))(X, A2)
