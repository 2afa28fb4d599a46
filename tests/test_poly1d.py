"""np.poly1d of traced coefficients (numpy/_poly1d.py): values, derivatives, antiderivatives
and arithmetic equal NumPy's (whose poly1d drops the leading zero coefficients: also where
they are zero, and at infinite points), central-difference gradients, batched = unbatched in
loops over samples; what depends on the trimmed length raises a TraceError at the line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import TraceError

R = np.random.default_rng(17)
T = np.linspace(0.0, 1.0, 7)
C4 = R.standard_normal(4)

USES = {
    "fit": lambda c: c[:3] - np.poly1d(np.polyfit(T[:4], c * 2.0, 2))(T[:3]),
    "deriv": lambda c: np.poly1d(c).deriv()(T),
    "deriv2": lambda c: np.poly1d(c).deriv(2)(0.5),
    "integ": lambda c: np.poly1d(c).integ(k=1.0)(T),
    "integ2": lambda c: np.poly1d(c).integ(2)(T),
    "add": lambda c: (np.poly1d(c) + np.poly1d([1.0, 2.0]))(T),
    "radd": lambda c: (3.0 + np.poly1d(c))(T),
    "sub": lambda c: (np.poly1d(c) - np.poly1d(c[:2]))(T),
    "rsub": lambda c: ([1.0, 0.0] - np.poly1d(c))(T),
    "mul": lambda c: (np.poly1d(c) * np.poly1d(c[:2]))(T),
    "scaled": lambda c: (2.0 * np.poly1d(c))(T) + (np.poly1d(c) * 0.5)(T),
    "pow": lambda c: (np.poly1d(c[:2]) ** 3)(T),
    "neg_div": lambda c: (-np.poly1d(c) / 4.0)(T),
    "int_point": lambda c: np.poly1d(c)(3),
    "list_points": lambda c: np.poly1d(c)([1, 2]),
    "roots": lambda c: np.poly1d(c[:2], r=True)(T),
    "of_poly1d": lambda c: np.poly1d(np.poly1d(c))(T) * isinstance(np.poly1d(c), np.poly1d),
    "float32": lambda c: np.poly1d(c.astype(np.float32))(T.astype(np.float32)),
}


def _zero_led(c):
    return c * np.array([0.0, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("name", sorted(USES))
def test_traced_poly1d_is_numpys(name):
    f = USES[name]
    assert_same(vg.jit(f)(C4), f(C4), rtol=1e-12)
    z = _zero_led(C4)  # (leading zeros that NumPy drops)
    assert_same(vg.jit(f)(z), f(z), rtol=1e-12)
    if name != "float32":
        vg.check_grads(lambda c: vnp.sum(vnp.asarray(f(c)) * 1.5), (C4,), rtol=1e-6,
                       atol=1e-8)


def test_points_at_infinity_see_only_the_kept_coefficients():
    """NumPy's trimmed Horner never multiplies a dropped zero by inf."""
    def f(c):
        return np.poly1d(c)(np.array([np.inf, -np.inf, 1.0]))
    z = _zero_led(C4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(vg.jit(f)(z), f(z))


def test_a_fit_per_sample_in_a_loop_batches():
    Y = R.standard_normal((5, 7))

    def loss(Y):
        tot = 0.0
        for y in Y:
            p = np.poly1d(np.polyfit(T, y, 2))
            tot = tot + np.sum((y - p(T)) ** 2) + p.deriv()(0.5)
        return tot
    assert_same(vg.jit(loss)(Y), loss(Y), rtol=1e-10)
    vg.check_grads(loss, (Y,), rtol=1e-6, atol=1e-8)
    e, leaves = entry(loss, (Y,))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


@pytest.mark.parametrize("use", ["p.coeffs", "p.c", "p.order", "len(p)", "p[0]", "p.roots",
                                 "list(p)", "np.asarray(p)", "p == p", "p(p)"])
def test_what_depends_on_the_trimmed_length_is_refused_at_the_line(use):
    f = eval(f"lambda c: (lambda p: {use})(np.poly1d(c))", {"np": np})
    with pytest.raises(TraceError, match="leading zero"):
        vg.jit(f)(C4)


def test_numpy_poly1d_is_numpys_outside_and_for_constants():
    assert vg.jit(lambda c: np.poly1d([1.0, 2.0]).coeffs * c)(C4[:2]).shape == (2,)
    assert np.poly1d is np.lib.polynomial.poly1d if hasattr(np.lib, "polynomial") else True
    assert type(np.poly1d([1.0])).__name__ == "poly1d" and np.poly1d([0.0, 1.0]).order == 0
