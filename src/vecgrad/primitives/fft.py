"""Discrete Fourier transforms over static axes: complex-to-complex (fft), real-to-complex
(rfft, the last axis halved) and complex-to-real (irfft).

Complex VJPs follow JAX's convention: the VJP is the transpose of the JVP for the real
bilinear pairing <a, b> = Re(sum(a * b)), with no conjugation. The DFT matrix is symmetric,
so a c2c transform is its own transpose. rfft is "keep the first n//2 + 1 outputs of the c2c
transform of a real input", whose transpose zero-pads the cotangent, transforms it and keeps
the real part. irfft weighs each kept frequency by 1 (k = 0 and, for even n, k = n/2) or 2
(the others, standing for their conjugate partners) and drops the imaginary parts of the
first and middle ones, so its transpose is those weights times the inverse c2c transform.

The sizes n/s of NumPy's API (padding and truncation) are applied by vecgrad.numpy.fft before
these primitives, which transform the axes at their full length.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import conj
from .structural import BasicIndex, Sl, getitem

__all__ = ["fft", "irfft", "rfft"]

NORMS = (None, "backward", "ortho", "forward")


def complex_dtype(dt: np.dtype) -> np.dtype:
    """The complex dtype NumPy's FFTs compute in (single precision stays single)."""
    return np.dtype(np.complex64 if dt in (np.float32, np.complex64) else np.complex128)


def real_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if dt in (np.float32, np.complex64) else np.float64)


def _check_axes(x: Aval, axes: tuple[int, ...], norm: Any, name: str) -> None:
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"{name}: axes {axes} must be distinct axes of an array of shape "
                         f"{x.shape}")
    if any(x.shape[a] < 1 for a in axes):
        raise ShapeError(f"{name}: invalid number of data points along axes {axes} (shape "
                         f"{x.shape})")


def _shift(axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(a + 1 for a in axes)


def _last_part(x: Any, axis: int, stop: int) -> Any:
    idx = tuple(Sl(0, stop, 1) if i == axis else Sl(0, d, 1) for i, d in enumerate(x.shape))
    return getitem(x, idx=BasicIndex(idx))


# --- c2c --------------------------------------------------------------------------------------

def _fft_impl(x: np.ndarray, axes: tuple[int, ...], inverse: bool, norm: Any) -> np.ndarray:
    fn = np.fft.ifftn if inverse else np.fft.fftn
    return fn(x, axes=axes, norm=norm).astype(complex_dtype(x.dtype), copy=False)


def _fft_shape(x: Aval, axes: tuple[int, ...], inverse: bool, norm: Any) -> Aval:
    _check_axes(x, axes, norm, "fft")
    if x.dtype.kind != "c":
        raise ShapeError(f"fft: the primitive takes complex input, got {x.dtype}")
    return Aval(x.shape, complex_dtype(x.dtype))


fft = register(Primitive(
    "fft", _fft_impl, _fft_shape,
    lambda g, ans, x, axes, inverse, norm: (fft(g, axes=axes, inverse=inverse, norm=norm),),
    lambda n, b, x, axes, inverse, norm: fft(x, axes=_shift(axes), inverse=inverse,
                                             norm=norm)))


# --- r2c: the last of `axes` keeps n//2 + 1 frequencies ----------------------------------------

def _rfft_shape(x: Aval, axes: tuple[int, ...], norm: Any) -> Aval:
    _check_axes(x, axes, norm, "rfft")
    if x.dtype.kind == "c":
        raise TypeError("rfft takes real input (NumPy's rfft rejects complex arrays)")
    shape = list(x.shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return Aval(tuple(shape), complex_dtype(x.dtype))


def _weights(n: int, ndim: int, axis: int, dtype: np.dtype) -> np.ndarray:
    """How many of the n frequencies each of the n // 2 + 1 kept ones stands for: 1 (the
    zero frequency and, for even n, the middle one) or 2 (the others and their conjugate
    partners), shaped to broadcast along `axis`."""
    h = n // 2 + 1
    w = np.full(h, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w.reshape((h,) + (1,) * (ndim - 1 - axis)).astype(dtype)


_DUAL = {None: "forward", "ortho": "ortho", "forward": None}  # the transpose's scaling


def _rfft_vjp(g: Any, ans: Any, x: Any, axes: tuple[int, ...], norm: Any) -> tuple:
    # Re(F^T pad(g)), F the c2c transform of the real input. F is symmetric, and for a
    # real result Re(F pad(g)) = Re(F+ conj(pad(g))) with F+ the inverse transform without
    # its scaling: an irfft of conj(g) (which counts the frequencies it was not given twice,
    # hence the weights 1/w), at the cost of the forward transform.
    last = axes[-1]
    n = x.shape[last]
    w = _weights(n, g.ndim, last, real_dtype(g.dtype))
    return (irfft(conj(g) * (1 / w), axes=axes, n=n, norm=_DUAL[norm]),)


def _rfft_impl(x: np.ndarray, axes: tuple[int, ...], norm: Any) -> np.ndarray:
    return np.fft.rfftn(x, axes=axes, norm=norm).astype(complex_dtype(x.dtype), copy=False)


rfft = register(Primitive(
    "rfft", _rfft_impl, _rfft_shape, _rfft_vjp,
    lambda n, b, x, axes, norm: rfft(x, axes=_shift(axes), norm=norm)))


# --- c2r: the last of `axes` holds n//2 + 1 frequencies of a length-n real signal -------------

def _irfft_shape(x: Aval, axes: tuple[int, ...], n: int, norm: Any) -> Aval:
    _check_axes(x, axes, norm, "irfft")
    if n < 1 or x.shape[axes[-1]] != n // 2 + 1:
        raise ShapeError(f"irfft: {x.shape[axes[-1]]} frequencies along axis {axes[-1]} do "
                         f"not fit {n} output points (n // 2 + 1 expected)")
    shape = list(x.shape)
    shape[axes[-1]] = n
    return Aval(tuple(shape), real_dtype(x.dtype))


def _irfft_impl(x: np.ndarray, axes: tuple[int, ...], n: int, norm: Any) -> np.ndarray:
    s = [x.shape[a] for a in axes[:-1]] + [n]
    return np.fft.irfftn(x, s=s, axes=axes, norm=norm).astype(real_dtype(x.dtype), copy=False)


def _irfft_vjp(g: Any, ans: Any, x: Any, axes: tuple[int, ...], n: int, norm: Any) -> tuple:
    # w * (the inverse c2c transform of the real g)[..., :h]: for real g that is
    # w * conj(rfft(g)) with the dual scaling
    last = axes[-1]
    w = _weights(n, x.ndim, last, real_dtype(x.dtype))
    return (conj(rfft(g, axes=axes, norm=_DUAL[norm])) * w,)


irfft = register(Primitive(
    "irfft", _irfft_impl, _irfft_shape, _irfft_vjp,
    lambda n_, b, x, axes, n, norm: irfft(x, axes=_shift(axes), n=n, norm=norm)))
