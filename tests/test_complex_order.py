"""Complex numbers in NumPy's lexicographic order: comparisons, maximum / minimum / fmax /
fmin, max / min / ptp / clip, on every backend, with NaN in either part where NumPy's rules
(its CLT/CGE macros) decide which operand comes out; gradients by central differences; and the
functions without a complex meaning refusing it with a typed error."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import ComplexError

NAN = np.nan
# ties in the real part, NaN in either part of either operand, infinities, equal pairs
Z = np.array([1 + 2j, 3 - 1j, 1 + 5j, complex(NAN, 0), complex(1, NAN), 2 + 0j, -1 - 1j,
              3 - 1j, complex(np.inf, 1), complex(-np.inf, -np.inf)])
W = np.array([1 + 3j, 2 + 9j, 1 + 5j, 0j, 2 + 0j, complex(1, NAN), -1 - 2j, 3 + 0j,
              complex(np.inf, 0), complex(-np.inf, 2)])
M = np.array([[1 + 2j, 3 - 1j, 1 + 5j, 3 - 2j], [2 + 0j, -1 - 1j, complex(NAN, 1), 3 - 1j],
              [0j, 0j, -1j, 1j]])

CASES = {
    "maximum": lambda xp, a, b: xp.maximum(a, b),
    "minimum": lambda xp, a, b: xp.minimum(a, b),
    "fmax": lambda xp, a, b: xp.fmax(a, b),
    "fmin": lambda xp, a, b: xp.fmin(a, b),
    "lt": lambda xp, a, b: a < b,
    "le": lambda xp, a, b: a <= b,
    "gt": lambda xp, a, b: xp.greater(a, b),
    "ge": lambda xp, a, b: xp.greater_equal(a, b),
    "max": lambda xp, a, b: xp.max(a),
    "min": lambda xp, a, b: xp.min(b),
    "max_rows": lambda xp, a, b: xp.max(M * 1, axis=1),
    "min_cols_keepdims": lambda xp, a, b: xp.min(M * 1, axis=0, keepdims=True),
    "max_all_2d": lambda xp, a, b: xp.amax(M * 1),
    "ptp": lambda xp, a, b: xp.ptp(M * 1, axis=1),
    "clip": lambda xp, a, b: xp.clip(a, 1 + 0j, 2 + 1j),
    "nanmax": lambda xp, a, b: xp.nanmax(a),
    "maximum_python_float": lambda xp, a, b: xp.maximum(a, 1.0),
    "maximum_real_array": lambda xp, a, b: xp.minimum(a, np.arange(10.0)),
    "complex64": lambda xp, a, b: xp.maximum(a.astype(np.complex64), 1.5),
    "max_initial_where": lambda xp, a, b: xp.max(b, initial=-5 + 0j, where=np.arange(10) > 2),
    "maximum_reduce": lambda xp, a, b: xp.maximum.reduce(M * 1, axis=0),
    "where_of_comparison": lambda xp, a, b: xp.where(a > b, a, b),
}


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind != "c":
        return np.array_equal(got, want)
    # NaN in the same part, and equal numbers elsewhere
    return all(np.array_equal(np.isnan(p(got)), np.isnan(p(want))) and
               np.array_equal(np.nan_to_num(p(got)), np.nan_to_num(p(want)))
               for p in (np.real, np.imag))


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_equal_numpy(name, backend, x64):
    f = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(np, Z, W)
        got = vg.jit(lambda a, b: f(vnp, a, b), backend=backend)(Z, W)
    assert _same(got, want), (got, want)


@pytest.fixture(params=["numpy", "jax", "torch", "numba"])
def backend(request):
    if request.param != "numpy":
        pytest.importorskip(request.param)
    return request.param


def test_order_inside_a_batched_loop():
    """Per-row maxima of complex rows in a loop batch as one reduction, with NumPy's values."""
    def f(a):
        out = vnp.zeros(a.shape[0], dtype=a.dtype)
        for i in range(a.shape[0]):
            out[i] = vnp.max(vnp.maximum(a[i], 0.5 + 0.5j))
        return out
    a = np.random.default_rng(0).normal(size=(40, 5)) + 1j * np.random.default_rng(1).normal(
        size=(40, 5))
    a[3, 1] = complex(NAN, 2.0)
    got = vg.jit(f)(a)
    want = np.array([np.max(np.maximum(r, 0.5 + 0.5j)) for r in a])
    assert _same(got, want)


def test_gradients_by_central_differences():
    r = np.random.default_rng(2)
    z = r.normal(size=6) + 1j * r.normal(size=6)
    w = r.normal(size=6) + 1j * r.normal(size=6)
    vg.check_grads(lambda a, b: vnp.sum(vnp.abs(vnp.maximum(a, b)) ** 2), [z, w],
                   argnums=(0, 1))
    vg.check_grads(lambda a: vnp.abs(vnp.max(a * a)) + vnp.abs(vnp.min(a)), [z])
    vg.check_grads(lambda a: vnp.sum(vnp.abs(vnp.clip(a, -0.5 + 0j, 0.5 + 0j))), [z])
    vg.check_grads(lambda a, b: vnp.sum(vnp.real(vnp.fmin(a, b) * 1j)), [z, w],
                   argnums=(0, 1))


def test_the_gradient_goes_to_the_chosen_operand():
    z, w = np.array([1 + 5j, 2 + 0j]), np.array([1 + 3j, 1 + 9j])  # z wins both: ties in re
    gz, gw = vg.grad(lambda a, b: vnp.sum(vnp.real(vnp.maximum(a, b))), argnums=(0, 1))(z, w)
    np.testing.assert_array_equal(gz, [1, 1])
    np.testing.assert_array_equal(gw, [0, 0])


@pytest.mark.parametrize("fn", [
    lambda z: vg.nn.relu(z), lambda z: vg.nn.softplus(z), lambda z: vnp.histogram(z)[0],
    lambda z: vnp.histogramdd(vnp.stack([z.real, z], 1))[0]])
def test_functions_without_a_complex_meaning_refuse_it(fn):
    with pytest.raises(ComplexError, match=r"test_complex_order\.py"):
        vg.jit(fn)(Z)


@pytest.mark.parametrize("name", ["digitize", "percentile"])
def test_numpy_refusals_of_complex_input_are_kept(name):
    fns = {"digitize": lambda xp, z: xp.digitize(z, [0.0, 1.0]),
           "percentile": lambda xp, z: xp.percentile(z, 30)}
    with pytest.raises(TypeError) as want:
        fns[name](np, Z)
    with pytest.raises(TypeError) as got:
        vg.jit(lambda z: fns[name](vnp, z))(Z)
    assert str(want.value) in str(got.value)
