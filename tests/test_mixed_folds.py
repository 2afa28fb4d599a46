"""Python's max / min of traced ints and Python floats (`max(counts[i], 0.5)`, vecgrad.mixedfold):
NumPy's value wherever NumPy computes with the winner in float64 / complex128, a TraceError
naming the user's line where the dtype or value depends on which item won. Before, every
such call was a ConcretizationError."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import central_diff_check

import vecgrad as vg

X = np.linspace(0.1, 1.2, 6)
K = np.array([0, 1, 2, -1, 3, 0])
J = np.array([2, -3, 0, 5, 1, 0])
ENV = {"np": np, "i8": K.astype(np.int8), "u8": np.abs(K).astype(np.uint8), "x32": X.astype(np.float32)}


def _loop(expr: str):
    src = (f"def f(x, k, j):\n    tot = 0.0\n    for i in range(x.shape[0]):\n"
           f"        tot = tot + {expr}\n    return tot\n")
    ns = dict(ENV)
    exec(compile(src, "<mixed>", "exec"), ns)  # noqa: S102 - the program is the point
    return ns["f"]


# NumPy converts the winner to float64 / complex128 whichever item wins: its value
AGREE = [
    "max(k[i], 0.5) * x[i]", "x[i] / max(k[i], 0.25)", "min(k[i], 2.5) * x[i]",
    "max(0.5, k[i]) + x[i]", "max(k[i], 0.5) * 2.0 * x[i]", "max(k[i], 0.5) / 3 * x[i]",
    "(max(k[i], 0.5) > 0.7) * x[i]", "max(k[i], 0.5, 0) * x[i]", "max(k[i], 2, 1.5) * x[i]",
    "max(k[i], j[i], 0.5) * x[i]", "max([k[i], 0.5, -1.0]) * x[i]", "min(k[i], j[i], 1.5) * x[i]",
    "max(k[i], 0.5) ** 0.5 * x[i]", "np.where(max(k[i], 0.5) > 0.7, x[i], 0.0)",
    "np.exp(x[i]) * max(k[i], -0.5)", "max(i8[i], 0.5) * x[i]", "max(u8[i], 0.5) * x[i]",
    "(max(k[i], 0.5) + 1j * x[i]).real", "np.asarray(max(k[i], 0.5), dtype=float) * x[i]",
    "(max(k[i], 0.5) + 1.0) * x[i]", "max(k[i], 0.5) // 2.0 * x[i]", "2.0 ** max(k[i], 0.5) * x[i]",
    "max(max(k[i], 0.5), 0.25) * x[i]", "min(max(k[i], 0.5), 2.5) * x[i]",
    "max(min(j[i], 1.5), -0.5, 0) * x[i]", "np.maximum(max(k[i], 0.5), x[i])",
    "np.sum(max(k[i], 0.5) * np.ones(2)) * x[i]", "np.array([max(k[i], 0.5), x[i]]).sum()",
    "np.stack([max(k[i], -1.5), x[i]])[0] * x[i]", "x[i] * max(k[i] - j[i], 0.0)",
]
# NumPy's dtype (or whether it raises) depends on which item won: a TraceError at the line
REFUSED = [
    "max(k[i], 0.5) + 1", "max(k[i], 0.5) ** 2 * x[i]", "-max(k[i], 0.5) * x[i]",
    "(max(k[i], 0.5) > 1) * x[i]", "np.sum(max(k[i], 0.5)) * x[i]", "max(k[i], 0.5) * x32[i]",
    "max(k[i], 0.5) * np.float32(2) * x[i]", "abs(max(k[i], -0.5)) * x[i]", "max(k[i], 0.5) - 1",
    "np.asarray(max(k[i], 0.5)).astype(np.float32) * x[i]", "np.array([max(k[i], 0.5), 1])[0]",
    "max(max(k[i], 0.5), 2) % 2", "max(k[i], 0.5) * i8[i]", "1 - min(k[i], 0.5)",
]


def _inputs():
    # the int wins, the number wins, ties (1 against 1.0), and every sign
    return [(X, K, J), (X, -K, J), (X, np.ones(6, np.int64), -J), (X, 3 * K, 0 * J)]


@pytest.mark.parametrize("expr", AGREE)
def test_mixed_fold_is_numpys_value_and_gradient(expr):
    f = _loop(expr)
    jf = vg.jit(f)
    for x, k, j in _inputs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.asarray(f(x, k, j))
        got = np.asarray(jf(x, k, j))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
        central_diff_check(lambda x, k=k, j=j: f(x, k, j), [x], argnums=(0,))


@pytest.mark.parametrize("expr", AGREE[:12])
def test_mixed_fold_batched_equals_unbatched(expr):
    """Over a batch of x (vg.vmap) and of k: each sample's value is the loop's own."""
    f = _loop(expr)
    xs = np.stack([X, 2 * X - 1, X[::-1]])
    ks = np.stack([K, -K, np.ones(6, np.int64)])
    got = vg.jit(vg.vmap(f, in_axes=(0, 0, None)))(xs, ks, J)
    want = [f(x, k, J) for x, k in zip(xs, ks)]
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("expr", REFUSED)
def test_mixed_fold_whose_dtype_depends_on_the_winner_is_refused(expr):
    """`max(n[i], 0.5) + 1` is int64 arithmetic where n[i] wins and a float where 0.5 does;
    `* x32[i]` float64 or float32; np.sum of it int64 or float64; its cast to float32 rounds
    an int64 twice: each a TraceError naming np.maximum and the user's line."""
    f = _loop(expr)
    with pytest.raises(vg.TraceError, match=r"np\.(maximum|minimum)") as e:
        vg.jit(f)(X, K, J)
    assert "<mixed>:4" in str(e.value)


def test_mixed_fold_returned_is_refused():
    """NumPy returns an int64 scalar or the float: its dtype depends on the values."""
    def f(x, k):
        return max(k[0], 0.5) * 1.0, max(k[1], 0.5)
    with pytest.raises(vg.TraceError, match=r"np\.maximum"):
        vg.jit(f)(X, K)


def test_mixed_fold_with_a_float_item_is_pythons_refusal():
    """An int item, a float64 item and a number: the winner is int64 or float64 (not a
    Python number): still Python's own max, whose comparison of traced values refuses."""
    def f(x, k):
        return max(k[0], x[0], 0.5)
    with pytest.raises(vg.ConcretizationError):
        vg.jit(f)(X, K)

    def g(x, k):
        return max(max(k[0], 0.5), x[1])
    with pytest.raises(vg.ConcretizationError):
        vg.jit(g)(X, K)


def test_mixed_fold_many_items_and_large_ints():
    """A generator of ints past FOLD_AT_ONCE with a float, and int64 values past 2**53
    (compared in int64 among themselves, with the float in float64, as NumPy does)."""
    def f(x, k):
        return max(max(k[i] for i in range(k.shape[0])), 0.5) * x[0] + \
            min([*(k[i] for i in range(k.shape[0])), 1.5]) * x[1]
    big = np.array([2 ** 60 + 1, 2 ** 60, -(2 ** 60), 3, 2, 1, 0, -1, 5, 7], np.int64)
    for k in (K, big, -big, np.zeros(10, np.int64)):
        want = f(X, k)
        got = vg.jit(f)(X, k)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-15)
