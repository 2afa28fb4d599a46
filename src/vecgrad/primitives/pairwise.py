"""Pairwise squared Euclidean distances, the kernel of pairwise kernels and clusterings.

- `sqdist(x, y)`: `out[i, j] = sum_k (x[i, k] - y[j, k]) ** 2` of real x (n, d) and y (m, d).

The simplifier emits it for the squared norm of a difference of broadcasts
(`sum((x[:, None] - y[None]) ** 2, -1)`, which a loop over pairs i, j batches into): the
kernels compute it from the differences themselves, so it is as accurate as the original
(never expanded into |x|^2 + |y|^2 - 2 x.y, which loses every digit for nearby points), and
without the (n, m, d) array of differences. Its VJP is two contractions with x and y
(`dx = 2 (rowsum(g) x - g @ y)`), the form the contraction rules give the gradient of the
explicit differences (rewrite/distribute.py says why that form is backward stable).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import mul, real_only, sub
from .linalg import einsum
from .shapes import reshape

__all__ = ["sqdist"]


def _sqdist_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    d = x[:, None, :] - y[None, :, :]
    return np.einsum("ijk,ijk->ij", d, d)


def _sqdist_shape(x: Aval, y: Aval) -> Aval:
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ShapeError(f"sqdist: operands (n, d) and (m, d) expected (got shapes {x.shape} "
                         f"and {y.shape})")
    real_only("sqdist", x, y)
    dt = np.result_type(x.dtype, y.dtype)
    if dt.kind != "f":
        raise ShapeError(f"sqdist: real floating operands expected (got {dt})")
    return Aval((x.shape[0], y.shape[0]), dt)


def _sqdist_vjp(g: Any, ans: Any, x: Any, y: Any) -> tuple:
    # d/dx_i sum_j g_ij |x_i - y_j|^2 = 2 (sum_j g_ij) x_i - 2 sum_j g_ij y_j, and for y_j
    # the same with the roles swapped
    gx = sub(einsum(g, x, spec="ij,ik->ik"), einsum(g, y, spec="ij,jk->ik"))
    gy = sub(einsum(g, y, spec="ij,jk->jk"), einsum(g, x, spec="ij,ik->jk"))
    return mul(gx, 2.0), mul(gy, 2.0)


def _sqdist_batch(n: int, batched: tuple[bool, ...], x: Any, y: Any) -> Any:
    # n instances: the explicit differences, (n, rows of x, rows of y, d)
    xs = reshape(x, shape=x.shape[:-1] + (1, x.shape[-1]))
    ys = reshape(y, shape=y.shape[:-2] + (1,) + y.shape[-2:])
    d = sub(xs, ys)
    return einsum(d, d, spec="bijk,bijk->bij")


sqdist = register(Primitive("sqdist", _sqdist_impl, _sqdist_shape, _sqdist_vjp,
                            _sqdist_batch))
