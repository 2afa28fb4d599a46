"""`vecgrad.numpy.fft`: NumPy's discrete Fourier transforms for traced code, with gradients.

The arguments are NumPy's (n, s, axis, axes, norm); `np.fft.*` on traced arrays dispatches
here. Gradients follow JAX's complex convention (see vecgrad.primitives.fft).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import unsupported
from ..primitives.fft import complex_dtype
from ._base import _shape, asarray, astype
from ._ops import concatenate, conj
from ._tiling import roll

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]

fftfreq, rfftfreq = _np.fft.fftfreq, _np.fft.rfftfreq


def _fit(x: Any, axis: int, n: int) -> Any:
    """x truncated or zero-padded along `axis` to length n (NumPy's n/s semantics)."""
    m = _shape(x)[axis]
    if n == m:
        return x
    if n < m:
        key = tuple(slice(0, n) if i == axis else slice(None) for i in range(len(_shape(x))))
        return x[key]
    pad = tuple(n - m if i == axis else d for i, d in enumerate(_shape(x)))
    return concatenate([x, _np.zeros(pad, x.dtype)], axis=axis)


def _prepare(a: Any, s: Any, axes: Any, real_last: bool = False, c2r: bool = False) -> tuple:
    """(array, axes normalized, sizes): NumPy's rules for s and axes."""
    a = asarray(a)
    nd = len(_shape(a))
    if axes is None:
        if s is not None:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in "
                          "NumPy 2.0).", DeprecationWarning, stacklevel=3)
        axes = list(range(nd - (len(s) if s is not None else nd), nd))
    axes = [int(ax) for ax in (axes if isinstance(axes, (list, tuple)) else [axes])]
    for ax in axes:
        if not -nd <= ax < nd:
            raise _np.exceptions.AxisError(ax, nd)
    axes = [ax % nd for ax in axes]
    if s is None:
        s = [_shape(a)[ax] for ax in axes]
        if c2r:
            s[-1] = 2 * (s[-1] - 1)
    s = [int(v) for v in s]
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if any(v < 1 for v in s):
        raise ValueError(f"Invalid number of FFT data points ({min(s)}) specified.")
    return a, axes, s


def _norm(norm: Any) -> Any:
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    return None if norm == "backward" else norm


def _c2c(a: Any, s: Any, axes: Any, norm: Any, inverse: bool) -> Any:
    a, axes, s = _prepare(a, s, axes)
    norm = _norm(norm)
    x = astype(a, complex_dtype(_np.dtype(a.dtype)))
    if len(set(axes)) != len(axes):  # a repeated axis is transformed again, as NumPy does
        for ax, n in zip(reversed(axes), reversed(s)):
            x = P.fft(_fit(x, ax, n), axes=(ax,), inverse=inverse, norm=norm)
        return x
    for ax, n in zip(axes, s):
        x = _fit(x, ax, n)
    return P.fft(x, axes=tuple(axes), inverse=inverse, norm=norm)


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise unsupported(f"numpy.fft.{name} with out=")


def fft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """The 1-D discrete Fourier transform along `axis` (padded or cut to n points)."""
    _no_out(out, "fft")
    return _c2c(a, None if n is None else [n], [axis], norm, False)


def ifft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """The 1-D inverse discrete Fourier transform."""
    _no_out(out, "ifft")
    return _c2c(a, None if n is None else [n], [axis], norm, True)


def fftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """The N-D discrete Fourier transform over `axes` (all by default)."""
    _no_out(out, "fftn")
    return _c2c(a, s, axes, norm, False)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """The N-D inverse discrete Fourier transform."""
    _no_out(out, "ifftn")
    return _c2c(a, s, axes, norm, True)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """The 2-D discrete Fourier transform (the last two axes by default)."""
    return fftn(a, s, axes, norm, out)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
          out: Any = None) -> Any:
    """The 2-D inverse discrete Fourier transform."""
    return ifftn(a, s, axes, norm, out)


def _check_real(a: Any, name: str) -> Any:
    dt = _np.dtype(a.dtype)
    if dt.kind == "c":
        raise TypeError(f"numpy.fft.{name} takes real input (got {dt})")
    return astype(a, _np.float64) if dt.kind != "f" else a


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """The N-D FFT of a real array: the last axis keeps s[-1] // 2 + 1 frequencies."""
    _no_out(out, "rfftn")
    a, axes, s = _prepare(a, s, axes)
    if len(set(axes)) != len(axes):
        raise unsupported("numpy.fft.rfftn with a repeated axis")
    x = _check_real(a, "rfftn")
    for ax, n in zip(axes, s):
        x = _fit(x, ax, n)
    return P.rfft(x, axes=tuple(axes), norm=_norm(norm))


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """The inverse of rfftn: a real array with s[-1] points on the last axis (by default
    2 * (m - 1) for m frequencies)."""
    _no_out(out, "irfftn")
    a, axes, s = _prepare(a, s, axes, c2r=True)
    if len(set(axes)) != len(axes):
        raise unsupported("numpy.fft.irfftn with a repeated axis")
    x = astype(a, complex_dtype(_np.dtype(a.dtype)))
    for ax, n in zip(axes[:-1], s[:-1]):
        x = _fit(x, ax, n)
    x = _fit(x, axes[-1], s[-1] // 2 + 1)
    return P.irfft(x, axes=tuple(axes), n=s[-1], norm=_norm(norm))


def rfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """The 1-D FFT of a real signal: n // 2 + 1 frequencies."""
    _no_out(out, "rfft")
    return rfftn(a, None if n is None else [n], [axis], norm)


def irfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """The inverse of rfft: n real points (2 * (m - 1) by default)."""
    _no_out(out, "irfft")
    return irfftn(a, None if n is None else [n], [axis], norm)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
          out: Any = None) -> Any:
    """The 2-D FFT of a real array."""
    return rfftn(a, s, axes, norm, out)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
           out: Any = None) -> Any:
    """The inverse of rfft2."""
    return irfftn(a, s, axes, norm, out)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """The FFT of a signal with Hermitian symmetry (a real spectrum): irfft of conj(a)
    with the normalization swapped, as NumPy."""
    _no_out(out, "hfft")
    return irfft(conj(asarray(a)), n, axis, _SWAP[_norm(norm)])


def ihfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """The inverse of hfft: conj(rfft(a)) with the normalization swapped."""
    _no_out(out, "ihfft")
    return conj(rfft(a, n, axis, _SWAP[_norm(norm)]))


def _shift(x: Any, axes: Any, inverse: bool) -> Any:
    x = asarray(x)
    nd = len(_shape(x))
    axes = list(range(nd)) if axes is None else \
        [ax % nd for ax in (axes if isinstance(axes, (list, tuple)) else [axes])]
    shifts = [-(_shape(x)[ax] // 2) if inverse else _shape(x)[ax] // 2 for ax in axes]
    return roll(x, shifts, axes)


def fftshift(x: Any, axes: Any = None) -> Any:
    """Move the zero frequency to the center (a roll by n // 2 along `axes`)."""
    return _shift(x, axes, False)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of fftshift."""
    return _shift(x, axes, True)
