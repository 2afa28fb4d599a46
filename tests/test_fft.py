"""vecgrad.numpy.fft end to end: values against NumPy for every function and its n/s/axes/norm
arguments, VJPs against central differences in random complex directions under JAX's
convention (Re(sum(vjp(ct) * t)) == Re(sum(ct * (f(z + eps t) - f(z - eps t)) / (2 eps)))),
np.fft dispatch from traced code, and loops of transforms batched."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(0)


def crand(*s):
    return R.standard_normal(s) + 1j * R.standard_normal(s)


def _rand_like(x, rng):
    x = np.asarray(x)
    r = rng.standard_normal(x.shape)
    return r + 1j * rng.standard_normal(x.shape) if np.iscomplexobj(x) else r


def check(name, x, *args, **kw):
    """np.fft.<name>(x, ...) against vnp.fft.<name> in value, then the VJP in two random
    directions against central differences."""
    f = lambda z: getattr(vnp.fft, name)(z, *args, **kw)
    ref = getattr(np.fft, name)(x, *args, **kw)
    got = vg.jit(f)(x)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    out, vjp_fn = vg.vjp(f, x)
    rng = np.random.default_rng(1)
    ct = _rand_like(out, rng)
    (gx,) = vjp_fn(ct)
    assert gx.shape == x.shape and gx.dtype == x.dtype
    eps = 1e-6
    for _ in range(2):
        t = _rand_like(x, rng)
        fd = np.real(np.sum(ct * (getattr(np.fft, name)(x + eps * t, *args, **kw)
                                  - getattr(np.fft, name)(x - eps * t, *args, **kw)))) / (2 * eps)
        assert np.real(np.sum(gx * t)) == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("n", [None, 3, 5, 8])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_fft_ifft(name, n, norm):
    check(name, crand(4, 5), n, -1, norm)
    check(name, R.standard_normal((5, 4)), n, 0, norm)  # real input: a real gradient


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn"])
def test_multidimensional(name):
    x = crand(4, 5, 3) / 10
    check(name, x)
    check(name, x, s=[7, 3], axes=[0, 2])
    check(name, R.standard_normal((4, 5, 3)), axes=(2, 0))
    check(name, x, norm="ortho", axes=[1])
    if name.endswith("n"):
        check(name, x, axes=(1, 1))  # a repeated axis is transformed twice, as NumPy


@pytest.mark.parametrize("n", [None, 3, 4, 6, 9])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfft_irfft(n, norm):
    check("rfft", R.standard_normal((3, 6)), n, -1, norm)
    check("rfft", R.standard_normal((5, 3)), n, 0, norm)
    # irfft: the imaginary parts of the zero (and, for even n, the middle) frequency are not
    # read, and the others stand for their conjugate partners too
    check("irfft", crand(3, 4), n, -1, norm)
    check("irfft", crand(5, 3), n, 0, norm)


@pytest.mark.parametrize("name", ["rfft2", "irfft2", "rfftn", "irfftn"])
def test_real_multidimensional(name):
    x = R.standard_normal((4, 6, 3)) if name.startswith("r") else crand(4, 6, 3)
    check(name, x)
    check(name, x, s=[5, 4], axes=[0, 1])
    check(name, x, s=[3, 7], axes=[2, 0], norm="ortho")
    if name.endswith("n"):
        check(name, x, axes=[1])


def test_hfft_ihfft_shifts():
    check("hfft", crand(3, 4))
    check("hfft", crand(3, 4), 5, 0, "ortho")
    check("ihfft", R.standard_normal((3, 6)))
    check("ihfft", R.standard_normal((3, 7)), None, -1, "forward")
    for name in ("fftshift", "ifftshift"):
        check(name, crand(4, 5))
        check(name, R.standard_normal((4, 5)), axes=1)
        check(name, R.standard_normal((4, 5, 3)), axes=(0, 2))


def test_float32_gives_complex64():
    x = R.standard_normal((4, 6)).astype(np.float32)
    assert vg.jit(vnp.fft.fft)(x).dtype == np.complex64
    assert vg.jit(vnp.fft.rfft)(x).dtype == np.complex64
    assert vg.jit(lambda x: vnp.fft.irfft(vnp.fft.rfft(x)))(x).dtype == np.float32


def test_errors_as_numpy():
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        vnp.fft.fft(np.ones(4), 0)
    with pytest.raises(ValueError, match="Invalid norm value"):
        vnp.fft.fft(np.ones(4), norm="bad")
    with pytest.raises(TypeError, match="real input"):
        vg.jit(vnp.fft.rfft)(crand(4))


def test_np_fft_on_traced_arrays_dispatches_and_differentiates():
    def loss(x):
        spec = np.fft.rfft(x)
        power = np.real(spec * np.conj(spec))
        return np.sum(power * np.arange(power.shape[-1])) + np.sum(np.abs(np.fft.fft2(x)))

    x = R.standard_normal((4, 8))
    np.testing.assert_allclose(vg.jit(loss)(x), loss(x), rtol=1e-12)
    vg.check_grads(loss, [x])


def test_loop_of_transforms_batches_into_one():
    x = R.standard_normal((6, 8))

    def loop(x):
        return sum(vnp.sum(vnp.abs(vnp.fft.rfft(x[i])) ** 2) for i in range(x.shape[0]))

    def vec(x):
        return vnp.sum(vnp.abs(vnp.fft.rfft(x)) ** 2)
    np.testing.assert_allclose(vg.jit(loop)(x), vg.jit(vec)(x), rtol=1e-12)
    np.testing.assert_allclose(vg.grad(loop)(x), vg.grad(vec)(x), rtol=1e-10, atol=1e-12)
    entry, _ = vg.grad(loop).entry(x)
    assert [e.prim.name for e in entry.stages["batch"].eqns].count("rfft") == 1


def test_indexing_a_spectrum_with_tuples_of_positions():
    # x[(0, 1, 0), (3, 3, 2)]: tuples inside an index are integer arrays, as in NumPy
    x = R.standard_normal((4, 4, 4)) / 10
    f = lambda x: vnp.fft.rfftn(x)[(0, 1, 0), (3, 3, 2)]
    np.testing.assert_allclose(vg.jit(f)(x), np.fft.rfftn(x)[(0, 1, 0), (3, 3, 2)])
    vg.check_grads(lambda x: vnp.sum(vnp.abs(f(x)) ** 2), [x])
