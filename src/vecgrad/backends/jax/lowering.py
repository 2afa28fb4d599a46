"""The JAX lowering table: one entry per primitive, each a builder (see backends.lowering)
whose callable runs the equation with jax.numpy / lax. Families are one line each."""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax.scipy.special as jsp
import numpy as np
from jax import lax

from ... import primitives as P
from ...custom import custom_vjp_call
from ...ir import Graph
from ...primitives.gathers import extreme_identity
from .. import complex_order as co
from ..lowering import (
    Site,
    Table,
    compute_dtype,
    contractions,
    flat_positions,
    generate,
    link,
    plain,
    to_out,
)
from ..lowering import elementwise as _elementwise
from ..lowering import reduction as _reduction
from . import contract


def cast(x: Any, dtype: np.dtype) -> Any:
    """x as `dtype`, in JAX's canonical form of it (float32 for float64 unless x64 is on);
    complex to real keeps the real part, as NumPy does."""
    x = jnp.asarray(x)
    if jnp.iscomplexobj(x) and np.dtype(dtype).kind != "c":
        x = jnp.real(x)
    return x.astype(jax.dtypes.canonicalize_dtype(dtype))


ew = functools.partial(_elementwise, cast=cast)
_to_out = functools.partial(to_out, cast=cast)
red = functools.partial(_reduction, cast=cast)


# NumPy's complex order (backends/complex_order.py) in jax.numpy / lax
_LIB = SimpleNamespace(
    real=jnp.real, imag=jnp.imag, isnan=jnp.isnan, where=jnp.where, complex=lax.complex,
    max=lambda a: jnp.max(a, axis=-1), min=lambda a: jnp.min(a, axis=-1),
    any=lambda a: jnp.any(a, axis=-1), permute=jnp.transpose,
    first=lambda x, m: jnp.take_along_axis(x, jnp.argmax(m, axis=-1)[..., None], -1)[..., 0])


_ordered = co.lowering(_LIB, cast)


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


def host(prim: P.Primitive) -> Any:
    """Run the primitive's NumPy implementation on the host (`jax.pure_callback`), for the
    few that JAX has no function for (Bessel functions of real order, Student's t CDF, ...)
    or whose NumPy result is implementation-defined (argpartition). Works under jit and vmap;
    on an accelerator it costs a round trip through host memory."""
    def build(site: Site, **params: Any) -> Any:
        def run(*xs: Any) -> Any:
            out = jax.ShapeDtypeStruct(site.out.shape,
                                       jax.dtypes.canonicalize_dtype(site.out.dtype))
            def cb(*arrays: Any) -> np.ndarray:
                return np.asarray(prim.impl(*arrays, **params), out.dtype)
            return jax.pure_callback(cb, out, *xs, vmap_method="broadcast_all"
                                     if prim.elementwise else "sequential")
        return run
    return build


def exact(fn: Any, site: Site) -> Any:
    """Check each lowered op's result shape and give it NumPy's dtype (in JAX's canonical
    form: without x64, float64 is float32). Runs while jax.jit traces, so it costs nothing."""
    def run(*xs: Any) -> Any:
        r = fn(*xs)
        if r.shape != site.out.shape:
            raise AssertionError(f"JAX lowering gave shape {r.shape}, expected {site.out}")
        dt = jax.dtypes.canonicalize_dtype(site.out.dtype)  # as x64 is while tracing
        return r if r.dtype == dt else cast(r, dt)
    return run


def trace_fn(g: Graph, name: str) -> Any:
    """The graph as a Python function of JAX arrays (to be traced by jax.jit, lax.scan or a
    user's transformation)."""
    return link(generate(g, name), LOWERINGS, const=lambda v: v, wrap=exact)


def _loop(site: Site, body: Graph, length: int, n_carry: int, n_xs: int,
          reverse: bool = False) -> Any:
    """lax.scan over the lowered step (from the last step when `reverse`, the ys in step
    order, as lax.scan's reverse); the result packed flat, as primitives/loop.py does."""
    step, nc, nx = trace_fn(body, "loop_body"), n_carry, n_xs
    dt = site.out.dtype

    def run(*args: Any) -> Any:
        consts = args[nc + nx:]

        def f(c: tuple, x: tuple) -> tuple:
            res = step(*c, *x, *consts)
            return tuple(res[:nc]), tuple(res[nc:])
        c, ys = lax.scan(f, tuple(args[:nc]), tuple(args[nc:nc + nx]), length=length,
                         reverse=reverse)
        return jnp.concatenate([cast(jnp.ravel(v), dt) for v in (*c, *ys)])
    return run


def _affine_scan(site: Site) -> Any:
    """c[t] = a[t] c[t-1] + b[t] as an associative scan of the steps' composition."""
    out, dt = site.out.shape, site.out.dtype

    def steps(x: Any) -> Any:  # (steps, *row) broadcast to the output's shape
        x = cast(x, dt)
        return jnp.broadcast_to(x.reshape(x.shape[:1] + (1,) * (len(out) - x.ndim) +
                                          x.shape[1:]), out)

    def run(init: Any, a: Any, b: Any) -> Any:
        a, b = steps(a), steps(b)
        b = b.at[0].add(a[0] * cast(init, dt))
        return lax.associative_scan(lambda l, r: (r[0] * l[0], r[0] * l[1] + r[1]), (a, b))[1]
    return run


def _cumprod_grad(site: Site, axis: int, running: bool = False) -> Any:
    """cumprod's VJP c[t-1] * lam[t], lam[t] = g[t] + x[t+1] lam[t+1] (primitives/
    cumulative.py), the recurrence from the last step as an associative scan; no division."""
    dt = site.out.dtype

    def run(g: Any, c: Any, x: Any) -> Any:
        g, c, x = (jnp.moveaxis(cast(v, dt), axis, 0) for v in (g, c, x))
        if g.shape[0] == 0:
            return jnp.moveaxis(g, 0, axis)
        before = jnp.concatenate([jnp.ones_like(c[:1]), c[:-1]])
        a = jnp.concatenate([jnp.zeros_like(x[:1]), x[:0:-1]])  # a[s] = x[T-s]
        lam = lax.associative_scan(lambda l, r: (r[0] * l[0], r[0] * l[1] + r[1]),
                                   (a, g[::-1]))[1][::-1]
        return jnp.moveaxis(before * lam, 0, axis)
    return run


def _prod_grad(site: Site, axes: tuple[int, ...]) -> Any:
    """g times the product of the other factors (primitives/products.py), exact at zeros: the
    product of the nonzero factors over x, kept where x is the only zero or there is none."""
    dt = site.out.dtype

    def run(g: Any, x: Any) -> Any:
        g, x = cast(g, dt), cast(x, dt)
        zero = x == 0
        xs = jnp.where(zero, 1, x)
        n0 = jnp.sum(zero, axis=axes, keepdims=True)
        gk = jnp.expand_dims(g, axes)
        keep = jnp.where(zero, n0 == 1, n0 == 0)
        return gk * jnp.prod(xs, axis=axes, keepdims=True) / xs * keep.astype(dt)
    return run


def _segment_scan(rated: bool) -> Any:
    """segment_cumsum / segment_affine (primitives/segscans.py) as one associative scan of
    (rate, value, start) triples: a start on the right keeps the right's map, else the two
    compose; selected by `where`, so no run's values are multiplied into another's. Reverse:
    the rows flipped, each run's last row its start, rates moved one row on."""
    def build(site: Site, reverse: bool = False) -> Any:
        out, dt = site.out.shape, site.out.dtype

        def col(m: Any) -> Any:
            return m.reshape(m.shape + (1,) * (len(out) - 1))

        def combine(l: Any, r: Any) -> Any:
            f = col(r[2])
            return (jnp.where(f, r[0], r[0] * l[0]), jnp.where(f, r[1], r[0] * l[1] + r[1]),
                    l[2] | r[2])

        def run(*xs: Any) -> Any:
            *ab, s = xs
            b = jnp.broadcast_to(cast(ab[-1], dt), out)
            a = jnp.broadcast_to(cast(ab[0], dt), out) if rated else jnp.ones(out, dt)
            s = s.astype(bool).at[0].set(True)
            if reverse:
                s = jnp.concatenate([s[1:], jnp.ones(1, bool)])[::-1]
                a = jnp.concatenate([a[:1], a[:0:-1]])
                b = b[::-1]
            c = lax.associative_scan(combine, (a, b, s))[1]
            return c[::-1] if reverse else c
        return run
    return build


def _linear_scan(site: Site) -> Any:
    """c[t] = A[t] c[t-1] + b[t] (k-vectors) as an associative scan of the steps'
    composition, (A2, b2) after (A1, b1) = (A2 A1, A2 b1 + b2)."""
    out, dt = site.out.shape, site.out.dtype
    T, k, row = out[0], out[1], out[2:]

    def pad(x: Any, lead: int) -> Any:
        x = cast(x, dt)
        return x.reshape(x.shape[:lead] + (1,) * (len(row) - x.ndim + lead) + x.shape[lead:])

    def run(init: Any, A: Any, b: Any) -> Any:
        A = jnp.broadcast_to(pad(A, 3), (T, k, k) + row)
        b = jnp.broadcast_to(pad(b, 2), out)
        c0 = jnp.broadcast_to(pad(init, 1), (k,) + row)
        b = b.at[0].add(jnp.einsum("ij...,j...->i...", A[0], c0))

        def compose(l: Any, r: Any) -> Any:
            return (jnp.einsum("tij...,tjl...->til...", r[0], l[0]),
                    jnp.einsum("tij...,tj...->ti...", r[0], l[1]) + r[1])
        return lax.associative_scan(compose, (A, b))[1]
    return run


def _cumulative(fn: Any) -> Any:
    def build(site: Site, axis: int, reverse: bool = False) -> Any:
        dt = site.out.dtype
        f = (lambda x: jnp.flip(fn(jnp.flip(x, axis), axis), axis)) if reverse else \
            (lambda x: fn(x, axis))
        return lambda x: f(cast(x, dt))
    return build


def _take_along(site: Site, axis: int) -> Any:
    n, out = site.ins[0].shape[axis], site.out.shape

    def run(x: Any, idx: Any) -> Any:
        idx = jnp.broadcast_to(jnp.where(idx < 0, idx + n, idx), out)
        return jnp.take_along_axis(jnp.broadcast_to(x, out[:axis] + (n,) + out[axis + 1:]),
                                   idx, axis)
    return run


def _strided(site: Site, start: tuple, dims: tuple) -> Any:
    pos = flat_positions(site.ins[0].shape, lambda a: P.strided.impl(a, start, dims))
    return lambda x: jnp.ravel(x)[pos]


def _strided_add(site: Site, start: tuple, dims: tuple) -> Any:
    pos = flat_positions(site.ins[0].shape, lambda a: P.strided.impl(a, start, dims))
    shape, dt = site.out.shape, site.out.dtype
    return lambda base, v: cast(jnp.ravel(base), dt).at[pos.ravel()].add(
        jnp.ravel(jnp.broadcast_to(cast(v, dt), pos.shape))).reshape(shape)


def _segment_sum(site: Site, ids: Any, axis: int, num: int) -> Any:
    key = (slice(None),) * axis + (ids.arr,)
    return lambda v: jnp.zeros(site.out.shape, v.dtype).at[key].add(v)


def _segment_extreme(op: str) -> Any:
    def lower(site: Site, ids: Any, axis: int, num: int) -> Any:
        key = (slice(None),) * axis + (ids.arr,)
        fill = np.full(site.out.shape, extreme_identity(op, site.out.dtype), site.out.dtype)
        at = "max" if op == "segment_max" else "min"
        return lambda v: getattr(jnp.asarray(fill).at[key], at)(v)
    return lower


def _scatter_add_along(site: Site, axis: int, size: int, unique: bool = False) -> Any:
    out = site.out.shape
    s = out[:axis] + (site.ins[1].shape[axis],) + out[axis + 1:]  # the index region

    def run(g: Any, idx: Any) -> Any:
        idx = jnp.broadcast_to(jnp.where(idx < 0, idx + size, idx), s)
        grid = list(jnp.ogrid[tuple(slice(d) for d in s)])
        grid[axis] = idx
        return jnp.zeros(out, site.out.dtype).at[tuple(grid)].add(jnp.broadcast_to(g, s))
    return run


def _scatter_reduce_along(site: Site, axis: int, op: str) -> Any:
    s, size = site.ins[1].shape, site.out.shape[axis]  # the values' region

    def run(a: Any, v: Any, idx: Any) -> Any:
        idx = jnp.broadcast_to(jnp.where(idx < 0, idx + size, idx), s)
        grid = list(jnp.ogrid[tuple(slice(d) for d in s)])
        grid[axis] = idx
        at = a.at[tuple(grid)]
        if op in ("builtin_max", "builtin_min"):  # (Python's max: a NaN value never wins)
            v = jnp.where(jnp.isnan(v), -jnp.inf if op == "builtin_max" else jnp.inf, v)
        return {"maximum": at.max, "minimum": at.min, "multiply": at.multiply,
                "builtin_max": at.max, "builtin_min": at.min}[op](v)
    return run



def _winner_shares(site: Site, axis: int) -> Any:
    """scatter_reduce_along's VJP: the winners (equal to the result) share the cotangent."""
    s, size, dt = site.ins[2].shape, site.ins[1].shape[axis], site.out.dtype

    def run(g: Any, a: Any, v: Any, idx: Any, ans: Any) -> Any:
        idx = jnp.broadcast_to(jnp.where(idx < 0, idx + size, idx), s)
        grid = list(jnp.ogrid[tuple(slice(d) for d in s)])
        grid[axis] = idx
        hit_a, hit_v = (a == ans).astype(dt), (v == ans[tuple(grid)]).astype(dt)
        cnt = hit_a + jnp.zeros(a.shape, dt).at[tuple(grid)].add(hit_v)
        share = cast(g, dt) / jnp.maximum(cnt, 1)
        return jnp.concatenate([share * hit_a, share[tuple(grid)] * hit_v], axis)
    return run

LOWERINGS: Table = {
    # elementwise: the jnp function of the same meaning
    P.neg: ew(jnp.negative), P.exp: ew(jnp.exp), P.log: ew(jnp.log), P.log1p: ew(jnp.log1p),
    P.expm1: ew(jnp.expm1), P.sqrt: ew(jnp.sqrt), P.abs_: ew(jnp.abs), P.sign: ew(jnp.sign),
    P.tanh: ew(jnp.tanh), P.sin: ew(jnp.sin), P.cos: ew(jnp.cos),
    P.logistic: ew(jax.nn.sigmoid), P.stop_gradient: ew(lax.stop_gradient),
    P.logical_not: ew(jnp.logical_not), P.powc: _powc,
    P.add: ew(jnp.add), P.sub: ew(jnp.subtract), P.mul: ew(jnp.multiply),
    P.div: ew(jnp.true_divide), P.pow_: ew(jnp.power),
    P.maximum: _ordered(ew(jnp.maximum), "maximum"),
    P.minimum: _ordered(ew(jnp.minimum), "minimum"), P.lt: _ordered(ew(jnp.less), "lt"),
    P.le: _ordered(ew(jnp.less_equal), "le"), P.gt: _ordered(ew(jnp.greater), "gt"),
    P.ge: _ordered(ew(jnp.greater_equal), "ge"), P.eq: ew(jnp.equal),
    P.ne: ew(jnp.not_equal), P.logical_and: ew(jnp.logical_and),
    P.logical_or: ew(jnp.logical_or), P.where: _where,
    P.cast: lambda site, dtype: lambda x: cast(x, dtype),
    # reductions over static axes
    P.reduce_sum: red(jnp.sum), P.reduce_max: _ordered(red(jnp.max), "reduce_max"),
    P.reduce_min: _ordered(red(jnp.min), "reduce_min"),
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
    **contractions(contract.einsum, jnp.sqrt, lambda x, a: jnp.sum(x, a, keepdims=True), cast),
    P.softmax: plain(jax.nn.softmax), P.logsumexp: plain(jax.nn.logsumexp),
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
    P.expm: _linalg(jsl.expm), P.sylvester: _linalg(jsl.solve_sylvester),
    P.eig: host(P.eig),  # (jnp.linalg.eig runs on CPUs only)
    # NumPy's other elementwise functions
    P.tan: ew(jnp.tan), P.sinh: ew(jnp.sinh), P.cosh: ew(jnp.cosh), P.arcsin: ew(jnp.arcsin),
    P.arccos: ew(jnp.arccos), P.arctan: ew(jnp.arctan), P.arcsinh: ew(jnp.arcsinh),
    P.arccosh: ew(jnp.arccosh), P.arctanh: ew(jnp.arctanh), P.log2: ew(jnp.log2),
    P.log10: ew(jnp.log10), P.exp2: ew(jnp.exp2), P.cbrt: ew(jnp.cbrt),
    P.reciprocal: ew(jnp.reciprocal), P.fabs: ew(jnp.fabs), P.deg2rad: ew(jnp.deg2rad),
    P.rad2deg: ew(jnp.rad2deg), P.sinc: ew(jnp.sinc), P.nan_to_num: ew(jnp.nan_to_num),
    P.floor: ew(jnp.floor), P.ceil: ew(jnp.ceil), P.trunc: ew(jnp.trunc), P.rint: ew(jnp.rint),
    P.fix: ew(jnp.trunc), P.round_: ew(jnp.round), P.isnan: ew(jnp.isnan),
    P.isinf: ew(jnp.isinf), P.isfinite: ew(jnp.isfinite), P.signbit: ew(jnp.signbit),
    P.logical_xor: ew(jnp.logical_xor), P.floor_divide: ew(jnp.floor_divide),
    P.bitwise_and: ew(jnp.bitwise_and), P.bitwise_or: ew(jnp.bitwise_or),
    P.bitwise_xor: ew(jnp.bitwise_xor), P.invert: ew(jnp.invert),
    P.left_shift: ew(jnp.left_shift), P.right_shift: ew(jnp.right_shift),
    P.frexp_exponent: ew(lambda x: jnp.frexp(x)[1]), P.nextafter: ew(jnp.nextafter),
    P.spacing: host(P.spacing), P.gcd: ew(jnp.gcd), P.lcm: ew(jnp.lcm),
    P.bitwise_count: ew(jnp.bitwise_count), P.logaddexp: ew(jnp.logaddexp),
    P.logaddexp2: ew(jnp.logaddexp2), P.arctan2: ew(jnp.arctan2), P.hypot: ew(jnp.hypot),
    P.remainder: ew(jnp.remainder), P.fmod: ew(jnp.fmod), P.copysign: ew(jnp.copysign),
    P.heaviside: ew(jnp.heaviside), P.fmax: _ordered(ew(jnp.fmax), "fmax"),
    P.fmin: _ordered(ew(jnp.fmin), "fmin"),
    P.real: ew(jnp.real), P.imag: ew(jnp.imag), P.conj: ew(jnp.conj), P.angle: ew(jnp.angle),
    # scipy.special: jax.scipy.special where it has the function, the host otherwise
    P.polygamma: lambda site: lambda n, x: jsp.polygamma(  # (n: JAX wants an integer type)
        cast(n, np.dtype(np.int32)), cast(x, site.out.dtype)),
    P.digamma: ew(jsp.digamma), P.gammaln: ew(jsp.gammaln),
    P.gamma: ew(jsp.gamma), P.rgamma: host(P.rgamma), P.gammasgn: ew(jsp.gammasgn),
    P.gammainc: ew(jsp.gammainc), P.gammaincc: ew(jsp.gammaincc), P.betaln: ew(jsp.betaln),
    P.beta: ew(jsp.beta), P.betainc: ew(jsp.betainc), P.zeta: ew(jsp.zeta),
    P.erf: ew(jsp.erf), P.erfc: ew(jsp.erfc), P.erfinv: ew(jsp.erfinv),
    P.erfcinv: host(P.erfcinv), P.ndtr: ew(jsp.ndtr), P.ndtri: ew(jsp.ndtri),
    P.log_ndtr: ew(jsp.log_ndtr), P.stdtr: host(P.stdtr), P.expi: ew(jsp.expi),
    P.exp1: ew(jsp.exp1), P.i0: ew(jsp.i0), P.i0e: ew(jsp.i0e), P.i1: ew(jsp.i1),
    P.i1e: ew(jsp.i1e), **{p: host(p) for p in (P.j0, P.j1, P.y0, P.y1, P.jv, P.yv, P.yn,
                                                 P.iv, P.ive)},
    P.nograd: lambda site, what: lambda x: x,
    # scans, sorting, gathers and scatters along an axis
    P.cumsum: _cumulative(jnp.cumsum), P.cumprod: _cumulative(jnp.cumprod),
    P.cummax: _cumulative(lambda x, axis: lax.cummax(x, axis)),
    P.cummin: _cumulative(lambda x, axis: lax.cummin(x, axis)),
    P.sort: lambda site, axis, kind: lambda x: jnp.sort(x, axis, stable=True),
    P.argsort: lambda site, axis, kind: lambda x: jnp.argsort(x, axis, stable=True),
    P.argpartition: host(P.argpartition), P.partition: host(P.partition),
    # Python's max/min folds (primitives/folds.py): NumPy's fmax loops on the host
    **{p: host(p) for p in (P.fold_extreme, P.fold_winner, P.fold_scatter, P.fold_total,
                            P.fold_pick, P.fold_pick_winner, P.fold_pick_scatter)},
    P.nonempty: host(P.nonempty),
    P.argmax: lambda site, axis: lambda x: jnp.argmax(x, axis),
    P.argmin: lambda site, axis: lambda x: jnp.argmin(x, axis),
    P.take_along: _take_along, P.scatter_add_along: _scatter_add_along,
    P.scatter_reduce_along: _scatter_reduce_along,
    P.winner_shares: _winner_shares,
    P.searchsorted: lambda site, side: lambda a, v: jnp.searchsorted(a, v, side),
    # Fourier transforms, recurrences, and the marker that lowering strips
    P.fft: _to_out(lambda x, axes, inverse, norm: (jnp.fft.ifftn if inverse else jnp.fft.fftn)(
        x, axes=axes, norm=norm)),
    P.rfft: lambda site, axes, norm: lambda x: jnp.fft.rfftn(x, axes=axes, norm=norm),
    P.irfft: lambda site, axes, n, norm: lambda x: jnp.fft.irfftn(
        x, s=[x.shape[a] for a in axes[:-1]] + [n], axes=axes, norm=norm),
    P.affine_scan: _affine_scan, P.cumprod_grad: _cumprod_grad, P.reduce_prod_grad: _prod_grad,
    P.linear_scan: _linear_scan, P.loop: _loop,
    P.segment_cumsum: _segment_scan(False), P.segment_affine: _segment_scan(True),
    custom_vjp_call: lambda site, rule: lambda *xs: xs[-1],
    # gathers and their adjoints at static positions; what only SciPy computes
    P.strided: _strided, P.strided_add: _strided_add,
    P.take: lambda site, ids, axis: lambda x: jnp.take(x, ids.arr, axis=axis),
    P.segment_sum: _segment_sum, P.sqrtm: host(P.sqrtm), P.odeint: host(P.odeint),
    P.segment_max: _segment_extreme("segment_max"),
    P.segment_min: _segment_extreme("segment_min"),
    P.correlate: lambda site, mode: lambda x, w: jnp.correlate(
        cast(x, site.out.dtype), cast(w, site.out.dtype), mode, precision="highest"),
}

__all__ = ["LOWERINGS", "cast", "compute_dtype"]
