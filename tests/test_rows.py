"""The NumPy backend's row kernel (backends/numpy/rows.py): an elementwise op of a large array
and an operand broadcast along its leading axes, run over long rows against the small operand
tiled. Its results must be NumPy's bit for bit, whatever the layout of the arrays at run time."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.backends.numpy import rows
from vecgrad.ir import Aval

F8 = np.dtype("f8")

CASES = [  # (big shape, small shape): which take the row kernel
    ((3000, 16), (16,)),
    ((3000, 16), (1, 16)),
    ((4000, 4, 2), (4, 2)),
    ((40, 100, 4), (1, 1, 4)),
    ((5000, 3), (3,)),
    ((4000, 32), (32,)),
]


def _aval(shape, dtype=F8):
    return Aval(shape, dtype)


@pytest.mark.parametrize(("big", "small"), CASES)
@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.true_divide,
                                   np.maximum, np.greater])
def test_row_kernel_is_numpy_bit_for_bit(big, small, ufunc):
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal(big), rng.standard_normal(small) + 3.0
    for order in (0, 1):
        avals = [_aval(big), _aval(small)][::1 if order == 0 else -1]
        k = rows.plan(ufunc, avals)
        assert isinstance(k, rows.Rows), (big, small)
        args = (x, s) if order == 0 else (s, x)
        want = ufunc(*args)
        got = k(*args)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.array_equal(got, want)
        if want.dtype == x.dtype:
            out = np.empty_like(x)
            assert k(*args, out=out) is out and np.array_equal(out, want)


def test_row_kernel_falls_back_on_other_layouts():
    """A transposed input, a strided output region, or a scalar-like operand: the plain ufunc."""
    rng = np.random.default_rng(1)
    k = rows.plan(np.subtract, [_aval((3000, 16)), _aval((16,))])
    xt = np.asfortranarray(rng.standard_normal((3000, 16)))
    mu = rng.standard_normal(16)
    assert np.array_equal(k(xt, mu), xt - mu)
    buf = np.zeros((3000, 32))
    k(xt, mu, out=buf[:, :16])
    assert np.array_equal(buf[:, :16], xt - mu) and not buf[:, 16:].any()


@pytest.mark.parametrize(("avals", "why"), [
    ([_aval((3000, 256)), _aval((256,))], "a long shared block: few inner loops"),
    ([_aval((100, 16)), _aval((16,))], "too few rows to pay for the tiling"),
    ([_aval((3000, 16)), _aval((3000, 1))], "broadcast along the trailing axis"),
    ([_aval((3000, 16)), _aval(())], "a scalar"),
    ([_aval((3000, 16)), _aval((3000, 16))], "no broadcast"),
    ([_aval((3000, 16)), _aval((16,), np.dtype("f4"))], "mixed dtypes"),
    ([_aval((3001, 16)), _aval((16,))], "a prime number of rows: no row length divides it"),
])
def test_row_kernel_is_not_planned_where_it_cannot_pay(avals, why):
    assert rows.plan(np.add, avals) is None, why


def test_compiled_programs_use_it_and_agree(monkeypatch):
    """A centred quadratic form over (3000, 16) rows: the compiled value and gradient use the
    row kernel and equal NumPy's computation."""
    rng = np.random.default_rng(2)
    x, mu, s = rng.standard_normal((3000, 16)), rng.standard_normal(16), rng.random(16) + 0.5

    def f(x, mu, s):
        return vnp.sum(vnp.tanh((x - mu) * s))

    val, (gx, gmu, gs) = vg.value_and_grad(f, argnums=(0, 1, 2))(x, mu, s)
    d = (x - mu) * s
    t = 1 - np.tanh(d) ** 2
    assert np.isclose(val, np.sum(np.tanh(d)), rtol=1e-12)
    assert np.allclose(gx, t * s, rtol=1e-12)
    assert np.allclose(gmu, -np.sum(t * s, 0), rtol=1e-10)
    assert np.allclose(gs, np.sum(t * (x - mu), 0), rtol=1e-10)
    calls = []
    real = rows.Rows.__call__
    monkeypatch.setattr(rows.Rows, "__call__", lambda self, *a, **k: calls.append(1) or
                        real(self, *a, **k))
    vg.grad(lambda x, mu, s: f(x, mu, s), argnums=(0, 1, 2))(x, mu, s)
    assert calls
