"""The JAX lowering table: one entry per primitive, each a builder (see backends.lowering)
whose callable runs the equation with jax.numpy / lax. Families are one line each."""
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import primitives as P
from ..lowering import Site, Table, compute_dtype, plain
from ..lowering import elementwise as _elementwise
from ..lowering import reduction as _reduction


def cast(x: Any, dtype: np.dtype) -> Any:
    """x as `dtype`, in JAX's canonical form of it (float32 for float64 unless x64 is on)."""
    return jnp.asarray(x).astype(jax.dtypes.canonicalize_dtype(dtype))


ew = functools.partial(_elementwise, cast=cast)
red = functools.partial(_reduction, cast=cast)


def _to_out(fn: Any) -> Any:
    """A builder whose operands are all cast to the result dtype first."""
    def build(site: Site, **params: Any) -> Any:
        dt = site.out.dtype
        f = (lambda *xs: fn(*xs, **params)) if params else fn
        return lambda *xs: f(*[cast(x, dt) if a.dtype != dt else x
                               for x, a in zip(xs, site.ins)])
    return build


def _powc(site: Site, p: float) -> Any:
    dt = site.out.dtype
    f = (lambda x: lax.integer_pow(x, int(p))) if float(p).is_integer() else \
        (lambda x: jnp.power(x, p))
    return f if site.ins[0].dtype == dt else (lambda x: f(cast(x, dt)))


def _where(site: Site) -> Any:
    dt = site.out.dtype
    return lambda c, x, y: jnp.where(jnp.asarray(c, bool), cast(x, dt), cast(y, dt))


def _getitem(site: Site, idx: tuple) -> Any:
    key = P.to_key(idx)
    return lambda x: x[key]


def _write(method: str) -> Any:
    def build(site: Site, idx: tuple) -> Any:
        key, dt = P.to_key(idx), site.out.dtype
        return lambda base, v: getattr(jnp.asarray(base).at[key], method)(cast(v, dt))
    return build


def _einsum(site: Site, spec: str) -> Any:
    return _to_out(lambda *xs: jnp.einsum(spec, *xs))(site)


def _norm(site: Site, spec: str) -> Any:
    s, t = spec.split("->")
    return lambda x: jnp.sqrt(jnp.einsum(f"{s},{s}->{t}", x, x))


def _muladd(site: Site, spec: str) -> Any:
    return _to_out(lambda x, y, c: jnp.einsum(spec, x, y) + c)(site)


def _softmax_vjp(g: Any, p: Any, axis: int) -> Any:
    t = g * p
    return t - p * jnp.sum(t, axis=axis, keepdims=True)


def _pack(outs: list, nbatch: int) -> Any:
    dt = jnp.result_type(*outs)
    return jnp.concatenate([o.reshape(o.shape[:nbatch] + (-1,)).astype(dt) for o in outs], -1)


def _packed(fn: Any) -> Any:
    """A decomposition with several results, packed as primitives/spectral.py does."""
    def build(site: Site, **params: Any) -> Any:
        return lambda a: _pack(list(fn(cast(a, site.out.dtype), **params)), a.ndim - 2)
    return build


def _slogdet(a: Any) -> Any:
    sign, logabs = jnp.linalg.slogdet(a)
    return jnp.stack([sign, logabs.astype(sign.dtype)], -1)


def _pinv(a: Any, rcond: float | None, hermitian: bool) -> Any:
    return jnp.linalg.pinv(a, rtol=1e-15 if rcond is None else rcond, hermitian=hermitian)


def _linalg(fn: Any) -> Any:
    """A linalg op computing in the result's dtype (integers become float64, as in NumPy)."""
    return _to_out(fn)


LOWERINGS: Table = {
    # elementwise: the jnp function of the same meaning
    P.neg: ew(jnp.negative), P.exp: ew(jnp.exp), P.log: ew(jnp.log), P.log1p: ew(jnp.log1p),
    P.expm1: ew(jnp.expm1), P.sqrt: ew(jnp.sqrt), P.abs_: ew(jnp.abs), P.sign: ew(jnp.sign),
    P.tanh: ew(jnp.tanh), P.sin: ew(jnp.sin), P.cos: ew(jnp.cos),
    P.logistic: ew(jax.nn.sigmoid), P.stop_gradient: ew(lax.stop_gradient),
    P.logical_not: ew(jnp.logical_not), P.powc: _powc,
    P.add: ew(jnp.add), P.sub: ew(jnp.subtract), P.mul: ew(jnp.multiply),
    P.div: ew(jnp.true_divide), P.pow_: ew(jnp.power), P.maximum: ew(jnp.maximum),
    P.minimum: ew(jnp.minimum), P.lt: ew(jnp.less), P.le: ew(jnp.less_equal),
    P.gt: ew(jnp.greater), P.ge: ew(jnp.greater_equal), P.eq: ew(jnp.equal),
    P.ne: ew(jnp.not_equal), P.logical_and: ew(jnp.logical_and),
    P.logical_or: ew(jnp.logical_or), P.where: _where,
    P.cast: lambda site, dtype: lambda x: cast(x, dtype),
    # reductions over static axes
    P.reduce_sum: red(jnp.sum), P.reduce_max: red(jnp.max), P.reduce_min: red(jnp.min),
    P.reduce_prod: red(jnp.prod),
    # indexing, writes, creation and shapes
    P.getitem: _getitem, P.setitem: _write("set"), P.setitem_add: _write("add"),
    P.full: lambda site, shape, dtype, value: lambda: jnp.full(shape, value, dtype),
    P.reshape: plain(jnp.reshape), P.transpose: lambda site, perm: lambda x: x.transpose(perm),
    P.relayout: lambda site, perm: lambda x: x.transpose(perm),
    P.broadcast_to: plain(jnp.broadcast_to),
    P.concatenate: _to_out(lambda *xs, axis: jnp.concatenate(xs, axis)),
    P.stack: _to_out(lambda *xs, axis: jnp.stack(xs, axis)),
    # contractions and fused nn
    P.einsum: _einsum, P.norm: _norm, P.muladd: _muladd,
    P.softmax: plain(jax.nn.softmax), P.logsumexp: plain(jax.nn.logsumexp),
    P.softmax_vjp: _to_out(_softmax_vjp),
    # linear algebra (the triangle-reading ones read exactly one triangle, as LAPACK does)
    P.solve: _linalg(jnp.linalg.solve), P.inv: _linalg(jnp.linalg.inv),
    P.det: _linalg(jnp.linalg.det), P.slogdet: _linalg(_slogdet),
    P.triangular_solve: _linalg(lambda a, b, lower, trans, unit_diagonal:
                                lax.linalg.triangular_solve(
                                    a, b, left_side=True, lower=lower, transpose_a=trans,
                                    unit_diagonal=unit_diagonal)),
    P.cholesky: _linalg(functools.partial(lax.linalg.cholesky, symmetrize_input=False)),
    P.pinv: _linalg(_pinv),
    P.eigh: _packed(functools.partial(jnp.linalg.eigh, symmetrize_input=False)),
    P.eigvalsh: _linalg(functools.partial(jnp.linalg.eigvalsh, symmetrize_input=False)),
    P.svd: _packed(lambda a, full_matrices: jnp.linalg.svd(a, full_matrices)),
    P.svdvals: _linalg(lambda a: jnp.linalg.svd(a, compute_uv=False)),
    P.qr: _packed(lambda a, complete: jnp.linalg.qr(a, "complete" if complete else "reduced")),
}

__all__ = ["LOWERINGS", "cast", "compute_dtype"]
