"""`vecgrad.scipy.signal`: convolution and correlation for traced code, with gradients.

A convolution is one gather of sliding windows of the (zero-padded) first operand and one
contraction with the flipped second: both are primitives with VJPs, so no new rule is needed.
The cost is that of the direct method (windows of the second operand's size).

`convolve` also takes autograd's generalization: `axes=(axes of in1, axes of in2)` are
convolved pairwise, `dot_axes` are contracted, and the remaining axes of in1 then in2 lead the
result, followed by the convolved axes.
"""
from __future__ import annotations

import string
from typing import Any

import numpy as _np

from .. import numpy as vnp
from ..errors import unsupported

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d"]


def _out_len(na: int, nb: int, mode: str) -> int:
    return {"full": na + nb - 1, "valid": abs(na - nb) + 1, "same": na}[mode]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto", *,
             axes: Any = None, dot_axes: Any = None) -> Any:
    """N-D convolution of in1 and in2, mode 'full', 'valid' or 'same' (as scipy.signal)."""
    if mode not in ("full", "valid", "same"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"acceptable method flags are 'auto', 'direct', or 'fft', got {method}")
    a, b = vnp.asarray(in1), vnp.asarray(in2)
    if axes is None:
        if vnp.ndim(a) != vnp.ndim(b):
            raise ValueError("in1 and in2 should have the same dimensionality")
        axes = (range(vnp.ndim(a)), range(vnp.ndim(b)))
    ca, cb = [int(x) % vnp.ndim(a) for x in axes[0]], [int(x) % vnp.ndim(b) for x in axes[1]]
    da, db = ([], []) if dot_axes is None else \
        ([int(x) % vnp.ndim(a) for x in dot_axes[0]], [int(x) % vnp.ndim(b) for x in dot_axes[1]])
    if len(ca) != len(cb) or len(da) != len(db):
        raise ValueError("axes and dot_axes must pair up axes of in1 and in2")
    sa, sb = vnp.shape(a), vnp.shape(b)
    if mode == "valid":
        small_b = all(sb[j] <= sa[i] for i, j in zip(ca, cb))
        if not small_b and not all(sa[i] <= sb[j] for i, j in zip(ca, cb)):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
        if not small_b:  # convolution commutes: window the larger operand
            out = _conv(b, a, cb, ca, db, da, "valid")
            ia, ib = _ignored(vnp.ndim(a), ca, da), _ignored(vnp.ndim(b), cb, db)
            k, m = len(ib), len(ia)
            return vnp.transpose(out, list(range(k, k + m)) + list(range(k)) +
                                 list(range(k + m, k + m + len(ca))))
    return _conv(a, b, ca, cb, da, db, mode)


def _ignored(nd: int, conv: list, dot: list) -> list:
    return [i for i in range(nd) if i not in conv and i not in dot]


def _conv(a: Any, b: Any, ca: list, cb: list, da: list, db: list, mode: str) -> Any:
    sa, sb = vnp.shape(a), vnp.shape(b)
    full = mode in ("full", "same")
    # zero-pad a by len(b) - 1 on both sides of each convolved axis (full), then gather the
    # windows: axis i of a becomes (output position, offset) with a_pad[k + j]
    if full:
        widths = [(0, 0)] * vnp.ndim(a)
        for i, j in zip(ca, cb):
            widths[i] = (sb[j] - 1, sb[j] - 1)
        a = vnp.pad(a, widths)
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in range(vnp.ndim(a))]
    lb = [next(letters) for _ in range(vnp.ndim(b))]
    for i, j in zip(da, db):
        lb[j] = la[i]
    key: list = [slice(None)] * vnp.ndim(a)
    spec_a, outs = [], {}
    for i, c in enumerate(la):
        if i in ca:
            nb = sb[cb[ca.index(i)]]
            n_out = vnp.shape(a)[i] - nb + 1
            key[i] = _np.arange(n_out)[:, None] + _np.arange(nb)[None, :]
            outs[i] = next(letters)
            spec_a += [outs[i], lb[cb[ca.index(i)]]]
        else:
            spec_a.append(c)
    windows = a
    for i in sorted(ca, reverse=True):  # one advanced index at a time (its two axes replace i)
        windows = windows[tuple(key[k] if k == i else slice(None) for k in range(len(key)))]
    flip = tuple(slice(None, None, -1) if j in cb else slice(None) for j in range(vnp.ndim(b)))
    ia, ib = _ignored(len(sa), ca, da), _ignored(len(sb), cb, db)
    out_spec = "".join(la[i] for i in ia) + "".join(lb[j] for j in ib) + \
        "".join(outs[i] for i in ca)  # (the convolved axes in the order `axes` pairs them)
    out = vnp.einsum("".join(spec_a) + "," + "".join(lb) + "->" + out_spec, windows, b[flip])
    if mode == "same":
        lead = len(ia) + len(ib)
        sl = [slice(None)] * lead
        for i, j in zip(ca, cb):
            start = (sb[j] - 1) // 2
            sl.append(slice(start, start + sa[i]))
        out = out[tuple(sl)]
    return out


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """N-D cross-correlation: convolution with in2 reversed and conjugated (as SciPy)."""
    b = vnp.asarray(in2)
    rev = b[(slice(None, None, -1),) * vnp.ndim(b)]
    if _np.dtype(rev.dtype).kind == "c":
        rev = vnp.conj(rev)
    return convolve(in1, rev, mode, method)


def _boundary(boundary: str, fillvalue: Any, name: str) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise unsupported(f"scipy.signal.{name} with boundary={boundary!r}, "
                          f"fillvalue={fillvalue!r} (only zero fill is traced)")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0) -> Any:
    """2-D convolution (zero fill at the boundary)."""
    _boundary(boundary, fillvalue, "convolve2d")
    if vnp.ndim(in1) != 2 or vnp.ndim(in2) != 2:
        raise ValueError("convolve2d inputs must both be 2-D arrays")
    return convolve(in1, in2, mode)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0) -> Any:
    """2-D cross-correlation (zero fill at the boundary)."""
    _boundary(boundary, fillvalue, "correlate2d")
    if vnp.ndim(in1) != 2 or vnp.ndim(in2) != 2:
        raise ValueError("correlate2d inputs must both be 2-D arrays")
    if mode != "same":
        return correlate(in1, in2, mode)
    # SciPy centers correlate2d's 'same' output at n // 2 (correlate's at (n - 1) // 2)
    (m0, m1), (n0, n1) = vnp.shape(in1), vnp.shape(in2)
    return correlate(in1, in2, "full")[n0 // 2:n0 // 2 + m0, n1 // 2:n1 // 2 + m1]
