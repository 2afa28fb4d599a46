"""The torch lowering table: one entry per primitive, each a builder (see backends.lowering)
whose callable runs the equation with torch operations on the site's device. Families are
one line each. Where torch's semantics differ from NumPy's (reductions over no axes, negative
slice steps, an integer index between slices, `prod` over several axes, promotion), the entry
says so."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from ... import primitives as P
from ..lowering import Site, Table, plain
from ..lowering import elementwise as _elementwise
from ..lowering import reduction as _reduction


@functools.cache
def torch_dtype(dt: np.dtype) -> torch.dtype:
    """The torch dtype of a NumPy dtype."""
    return torch.from_numpy(np.empty(0, dt)).dtype


def cast(x: Any, dt: np.dtype) -> Any:
    return x.to(torch_dtype(np.dtype(dt)))


ew = functools.partial(_elementwise, cast=cast)
red = functools.partial(_reduction, cast=cast, axis_kw="dim")

def _to_out(fn: Any) -> Any:
    """A builder whose operands are all cast to the result dtype first."""
    def build(site: Site, **params: Any) -> Any:
        dt = site.out.dtype
        f = (lambda *xs: fn(*xs, **params)) if params else fn
        which = [a.dtype != dt for a in site.ins]
        if not any(which):
            return f
        return lambda *xs: f(*[cast(x, dt) if w else x for x, w in zip(xs, which)])
    return build


def _prod(x: Any, dim: tuple[int, ...]) -> Any:
    for a in sorted(dim, reverse=True):  # torch.prod takes one axis at a time
        x = torch.prod(x, a)
    return x


def _powc(site: Site, p: float) -> Any:
    dt = site.out.dtype
    f = (lambda x: x * x) if p == 2 else (lambda x: torch.pow(x, p))
    return f if site.ins[0].dtype == dt else (lambda x: f(cast(x, dt)))


def _where(site: Site) -> Any:
    dt = site.out.dtype
    return lambda c, x, y: torch.where(c.bool(), cast(x, dt), cast(y, dt))


# --- indexing: torch's basic indexing is NumPy's for ints, positive-step slices and None;
# anything else (negative steps, integer arrays, whose placement rules differ) reads and
# writes through the flat positions of the region, computed once with NumPy.

def _simple(idx: tuple) -> bool:
    return P.is_basic(idx) and all(k.step > 0 for k in idx if isinstance(k, P.Sl))


def _positions(site: Site, idx: tuple) -> Any:
    shape = site.ins[0].shape
    flat = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[P.to_key(idx)]
    return torch.as_tensor(np.ascontiguousarray(flat), device=site.device)


def _getitem(site: Site, idx: tuple) -> Any:
    if _simple(idx):
        key = P.to_key(idx)
        return lambda x: x[key]
    pos = _positions(site, idx)
    return lambda x: torch.take(x, pos)


def _write(accumulate: bool) -> Any:
    def build(site: Site, idx: tuple) -> Any:
        dt = torch_dtype(site.out.dtype)
        if _simple(idx):
            key = P.to_key(idx)

            def basic(base: Any, v: Any) -> Any:
                out = base.clone(memory_format=torch.contiguous_format)
                if accumulate:
                    out[key] += v.to(dt)
                else:
                    out[key] = v.to(dt)
                return out
            return basic
        pos = _positions(site, idx)
        region, flat = tuple(pos.shape), pos.reshape(-1)

        def general(base: Any, v: Any) -> Any:
            out = base.clone(memory_format=torch.contiguous_format)
            vals = v.to(dt).expand(region).reshape(-1)
            out.view(-1).index_put_((flat,), vals, accumulate=accumulate)
            return out
        return general
    return build


def _full(site: Site, shape: tuple, dtype: np.dtype, value: float) -> Any:
    tdt = torch_dtype(np.dtype(dtype))
    return lambda: torch.full(shape, value, dtype=tdt, device=site.device)


def _einsum(site: Site, spec: str) -> Any:
    return _to_out(lambda *xs: torch.einsum(spec, *xs))(site)


def _norm(site: Site, spec: str) -> Any:
    s, t = spec.split("->")
    return lambda x: torch.sqrt(torch.einsum(f"{s},{s}->{t}", x, x))


def _muladd(site: Site, spec: str) -> Any:
    return _to_out(lambda x, y, c: torch.einsum(spec, x, y) + c)(site)


def _softmax_vjp(g: Any, p: Any, axis: int) -> Any:
    t = g * p
    return t - p * torch.sum(t, dim=axis, keepdim=True)


def _pack(outs: list, nbatch: int) -> Any:
    return torch.cat([o.reshape(o.shape[:nbatch] + (-1,)) for o in outs], -1)


def _packed(fn: Any) -> Any:
    """A decomposition with several results, packed as primitives/spectral.py does."""
    def build(site: Site, **params: Any) -> Any:
        dt = site.out.dtype
        return lambda a: _pack(list(fn(cast(a, dt), **params)), a.ndim - 2)
    return build


def _slogdet(a: Any) -> Any:
    sign, logabs = torch.linalg.slogdet(a)
    return torch.stack([sign, logabs.to(sign.dtype)], -1)


def _trisolve(a: Any, b: Any, lower: bool, trans: bool, unit_diagonal: bool) -> Any:
    # op(A) X = B; A^T is upper where A is lower (torch has no transpose flag)
    if trans:
        return torch.linalg.solve_triangular(a.mT, b, upper=lower, unitriangular=unit_diagonal)
    return torch.linalg.solve_triangular(a, b, upper=not lower, unitriangular=unit_diagonal)


def _pinv(a: Any, rcond: float | None, hermitian: bool) -> Any:
    return torch.linalg.pinv(a, rtol=1e-15 if rcond is None else rcond, hermitian=hermitian)


LOWERINGS: Table = {
    # elementwise: the torch function of the same meaning
    P.neg: ew(torch.neg), P.exp: ew(torch.exp), P.log: ew(torch.log), P.log1p: ew(torch.log1p),
    P.expm1: ew(torch.expm1), P.sqrt: ew(torch.sqrt), P.abs_: ew(torch.abs),
    P.sign: ew(torch.sign), P.tanh: ew(torch.tanh), P.sin: ew(torch.sin), P.cos: ew(torch.cos),
    P.logistic: ew(torch.sigmoid), P.stop_gradient: ew(lambda x: x),
    P.logical_not: ew(torch.logical_not), P.powc: _powc,
    P.add: ew(torch.add), P.sub: ew(torch.sub), P.mul: ew(torch.mul),
    P.div: ew(torch.true_divide), P.pow_: ew(torch.pow), P.maximum: ew(torch.maximum),
    P.minimum: ew(torch.minimum), P.lt: ew(torch.lt), P.le: ew(torch.le), P.gt: ew(torch.gt),
    P.ge: ew(torch.ge), P.eq: ew(torch.eq), P.ne: ew(torch.ne),
    P.logical_and: ew(torch.logical_and), P.logical_or: ew(torch.logical_or),
    P.where: _where, P.cast: lambda site, dtype: lambda x: cast(x, dtype),
    # reductions over static axes
    P.reduce_sum: red(torch.sum), P.reduce_max: red(torch.amax), P.reduce_min: red(torch.amin),
    P.reduce_prod: red(_prod),
    # indexing, writes, creation and shapes
    P.getitem: _getitem, P.setitem: _write(False), P.setitem_add: _write(True), P.full: _full,
    P.reshape: plain(torch.reshape), P.transpose: lambda site, perm: lambda x: x.permute(perm),
    P.relayout: lambda site, perm: lambda x: x.permute(perm).contiguous(),
    P.broadcast_to: lambda site, shape: lambda x: x.expand(shape),
    P.concatenate: _to_out(lambda *xs, axis: torch.cat(xs, axis)),
    P.stack: _to_out(lambda *xs, axis: torch.stack(xs, axis)),
    # contractions and fused nn
    P.einsum: _einsum, P.norm: _norm, P.muladd: _muladd,
    P.softmax: lambda site, axis: lambda x: torch.softmax(x, axis),
    P.logsumexp: lambda site, axis: lambda x: torch.logsumexp(x, axis),
    P.softmax_vjp: _to_out(_softmax_vjp),
    # linear algebra (the triangle-reading ones read exactly one triangle, as LAPACK does)
    P.solve: _to_out(torch.linalg.solve), P.inv: _to_out(torch.linalg.inv),
    P.det: _to_out(torch.linalg.det), P.slogdet: _to_out(_slogdet),
    P.triangular_solve: _to_out(_trisolve), P.cholesky: _to_out(torch.linalg.cholesky),
    P.pinv: _to_out(_pinv),
    P.eigh: _packed(lambda a, UPLO: torch.linalg.eigh(a, UPLO)),
    P.eigvalsh: _to_out(lambda a, UPLO: torch.linalg.eigvalsh(a, UPLO)),
    P.svd: _packed(lambda a, full_matrices: torch.linalg.svd(a, full_matrices)),
    P.svdvals: _to_out(torch.linalg.svdvals),
    P.qr: _packed(lambda a, complete: torch.linalg.qr(a, "complete" if complete else "reduced")),
}

# Ops whose result may share memory with their first operand: an output of the generated code
# reached from an input through them is copied (callers never get an alias of an argument).
VIEWS = frozenset({P.getitem, P.reshape, P.transpose, P.relayout, P.broadcast_to,
                   P.stop_gradient, P.cast, P.einsum})

__all__ = ["LOWERINGS", "VIEWS", "cast", "torch_dtype"]
