"""The contraction primitive. `dot`, `matmul`, `tensordot`, `inner`, `outer`, `diag` of a
matrix and `trace` are all `einsum` with an explicit output ('ij,jk->ik')."""
from __future__ import annotations

import functools
import string
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import kernels
from ..errors import ShapeError
from ..ir import Aval
from . import Primitive, costs, register
from .structural import broadcast_to, contiguous, reshape, transpose

__all__ = ["einsum", "make_spec", "muladd", "norm", "parse_spec"]


@functools.lru_cache(maxsize=4096)
def parse_spec(spec: str) -> tuple[list[str], str]:
    """'ij,jk->ik' -> (['ij', 'jk'], 'ik')."""
    ins, out = spec.split("->")
    return ins.split(","), out


def make_spec(ins: list[str], out: str) -> str:
    """The inverse of parse_spec."""
    return ",".join(ins) + "->" + out


def _einsum_shape(*xs: Aval, spec: str) -> Aval:
    return _einsum_shape_cached(spec, xs)


@functools.lru_cache(maxsize=8192)
def _einsum_shape_cached(spec: str, xs: tuple[Aval, ...]) -> Aval:
    ins, out = parse_spec(spec)
    if len(ins) != len(xs):
        raise ShapeError(f"einsum '{spec}' expects {len(ins)} operands, got {len(xs)}")
    dims: dict[str, int] = {}
    for s, x in zip(ins, xs):
        if len(s) != x.ndim:
            raise ShapeError(f"einsum '{spec}': operand of shape {x.shape} does not have "
                             f"{len(s)} axes")
        for c, d in zip(s, x.shape):
            if dims.setdefault(c, d) != d:
                raise ShapeError(f"einsum '{spec}': axis '{c}' has sizes {dims[c]} and {d} "
                                 f"(shapes {[x.shape for x in xs]})")
    return Aval(tuple(dims[c] for c in out), np.result_type(*[x.dtype for x in xs]))


def _fresh(used: set[str]) -> str:
    c = next(c for c in string.ascii_letters if c not in used)
    used.add(c)
    return c


def _einsum_vjp(g: Any, ans: Any, *xs: Any, spec: str) -> tuple:
    ins, out = parse_spec(spec)
    cts = []
    for k, (s, x) in enumerate(zip(ins, xs)):
        used = set(spec)
        ops, subs, eyes = [g], [out], []
        ops += [o for j, o in enumerate(xs) if j != k]
        subs += [t for j, t in enumerate(ins) if j != k]
        target = ""
        for c in s:  # a letter repeated in one operand (a diagonal) gets an identity matrix
            if c in target:
                f = _fresh(used)
                eyes.append((c, f))
                target += f
            else:
                target += c
        for c, f in eyes:
            n = x.shape[s.index(c)]
            ops.append(np.eye(n, dtype=x.dtype))
            subs.append(c + f)
        have = set("".join(subs))
        present = "".join(c for c in target if c in have)  # letters summed in x alone: broadcast
        ct = einsum(*ops, spec=make_spec(subs, present))
        if present != target:
            shape = tuple(d if c in have else 1 for c, d in zip(target, x.shape))
            perm = [present.index(c) for c in target if c in have]
            ct = broadcast_to(reshape(transpose(ct, perm=tuple(np.argsort(perm).tolist()))
                                      if perm != sorted(perm) else ct, shape=shape), shape=x.shape)
        cts.append(ct)
    return tuple(cts)


def _einsum_batch(n: int, batched: tuple[bool, ...], *xs: Any, spec: str) -> Any:
    ins, out = parse_spec(spec)
    b = _fresh(set(spec))
    ins = [b + s if bt else s for s, bt in zip(ins, batched)]
    return einsum(*xs, spec=make_spec(ins, b + out))


def einsum_work(spec: str, shapes: list[tuple[int, ...]]) -> float:
    """Multiply-adds of a contraction done as one loop nest: the product of all axis sizes."""
    dims = {c: d for t, sh in zip(parse_spec(spec)[0], shapes) for c, d in zip(t, sh)}
    return float(np.prod(list(dims.values()), dtype=np.float64))


MAX_TIMED_WORK = 2e6  # multiply-adds; bigger contractions are planned by layout rules


def plan_einsum(spec: str, shapes: list[tuple[int, ...]],
                dtypes: list[np.dtype] | None = None) -> Callable[..., np.ndarray]:
    """A fast callable for this contraction at these shapes. For two operands the candidates
    are a BLAS matmul (after moving batch axes first, which can cost a copy), NumPy's einsum
    loop (no copy, SIMD over contiguous axes) and NumPy's einsum with a BLAS path; which is
    fastest depends on the layout and the machine, so mid-sized contractions are decided by
    `kernels.choose` (a cost model, or a measurement stored on disk: see vecgrad.kernels)."""
    ins, out = parse_spec(spec)
    if len(ins) == 2 and all(len(set(s)) == len(s) for s in ins + [out]):
        dts = [np.dtype(d) for d in dtypes] if dtypes else [np.dtype(np.float64)] * 2
        cands = _candidates(spec, [tuple(s) for s in shapes])
        work = einsum_work(spec, shapes)
        if work > MAX_TIMED_WORK:  # too big to time while compiling: decide by layout
            a, b = ins
            if _matvec_needing_copy(a, b, out, shapes):
                return cands["loop"]
            return cands["lead"] if "lead" in cands and _mm_moves_big(a, b, out, shapes) \
                else cands["mm"]
        if work < 4096:
            return cands["loop"]
        return cands[choose_einsum(spec, [tuple(s) for s in shapes], dts, cands)]
    if len(ins) == 1:  # may be a view of x (e.g. 'ij->ji'): results must own their memory
        return lambda x: _owned(np.einsum(spec, x), x)
    path = np.einsum_path(spec, *[np.empty(s) for s in shapes], optimize="optimal")[0]
    return lambda *xs: np.einsum(spec, *xs, optimize=path)


def _candidates(spec: str, shapes: list[tuple[int, ...]]) -> dict[str, Callable]:
    """The two-operand plans, by name, in the order ties are broken."""
    (a, b), out = parse_spec(spec)
    mm = _plan_matmul(a, b, out, shapes)
    path = ["einsum_path", (0, 1)]  # NumPy's own BLAS route (tensordot), kept as a view
    cands = {"mm": mm, "loop": lambda x, y: np.einsum(spec, x, y),
             "blas": lambda x, y: np.einsum(spec, x, y, optimize=path),
             "lead": _plan_lead_batch(a, b, out, shapes),
             "aligned": _plan_loop_aligned(a, b, out, shapes),
             # the matmul's result in the output's order, copied with a cache-friendly
             # transpose (its consumers then read contiguous memory)
             "mm_c": lambda x, y: contiguous(mm(x, y))}
    return {k: c for k, c in cands.items() if c is not None}


def choose_einsum(spec: str, shapes: list[tuple[int, ...]], dtypes: list[np.dtype],
                  cands: dict[str, Callable] | None = None) -> str:
    """The name of the plan `plan_einsum` runs for a mid-sized two-operand contraction."""
    cands = cands if cands is not None else _candidates(spec, shapes)
    key = (spec, tuple(shapes), tuple(kernels.c_strides(s, d.itemsize)
                                      for s, d in zip(shapes, dtypes)),
           tuple(d.str for d in dtypes))

    def measure() -> dict[str, float]:
        xs = [np.ones(s, d) for s, d in zip(shapes, dtypes)]
        return dict(zip(cands, timings(list(cands.values()), xs)))
    return kernels.choose("einsum", key, lambda m: {n: costs.einsum_plan(n, spec, shapes,
                                                                          dtypes, m)
                                                     for n in cands}, measure)


def einsum_cost(spec: str, shapes: list[tuple[int, ...]], dtypes: list[np.dtype],
                m: kernels.Machine) -> float:
    """The modelled seconds of the contraction as `plan_einsum` would run it by the model
    (for passes that weigh a rewrite by the contractions it changes)."""
    dts = [np.dtype(d) for d in dtypes]
    if einsum_work(spec, shapes) < 4096:
        return costs.einsum_plan("loop", spec, shapes, dts, m)
    return min(costs.einsum_plan(n, spec, shapes, dts, m) for n in _candidates(spec, shapes))


def _mm_moves_big(a: str, b: str, out: str, shapes: list) -> bool:
    """Whether the matmul form must first copy the larger operand into another axis order."""
    batch = "".join(c for c in out if c in a and c in b)
    contr = "".join(c for c in a if c in b and c not in out)
    big_is_a = np.prod(shapes[0]) >= np.prod(shapes[1])
    s = a if big_is_a else b
    own = "".join(c for c in s if c in out or c in contr)
    free = "".join(c for c in s if c in out and c not in batch)
    want = batch + (free + contr if big_is_a else contr + free)
    return own != want


def _matvec_needing_copy(a: str, b: str, out: str, shapes: list) -> bool:
    """A batched matrix-vector product whose matmul form would first copy the big operand
    into batch-major order: NumPy's einsum loop reads it in place and wins."""
    batch = [c for c in out if c in a and c in b]
    fa = [c for c in a if c in out and c not in b]
    fb = [c for c in b if c in out and c not in a]
    big = a if np.prod(shapes[0]) >= np.prod(shapes[1]) else b
    return bool(batch) and not (fa and fb) and big[:len(batch)] != "".join(batch)


def _owned(r: np.ndarray, x: np.ndarray) -> np.ndarray:
    return r.copy() if isinstance(r, np.ndarray) and np.may_share_memory(r, x) else r


def _plan_lead_batch(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """Contracted letters that lead both operands ('aik,ajk->ij'): a batched matmul over them
    reads both operands in place (no transposing copy), and a sum over the batch follows."""
    lead = ""
    for x, y in zip(a, b):
        if x != y or x in out:
            break
        lead += x
    if not lead or len(lead) == len(a) or len(lead) == len(b) or \
            not (set(a[len(lead):]) & set(b[len(lead):])) - set(out):
        return None  # (no contraction left per batch: an outer product per row, then a sum
        # over a big intermediate: 'ab,ac->bc' is one matmul, 25x faster, measured)
    mid = lead + "".join(c for c in out if c in a or c in b)
    if len(set(mid)) != len(mid) or set(mid) != set(out) | set(lead):
        return None
    inner = _plan_matmul(a, b, mid, shapes)
    axes = tuple(range(len(lead)))
    return lambda x, y: inner(x, y).sum(axes)


def time_call(fn: Callable, xs: list[np.ndarray], tries: int = 2) -> float:
    """Min seconds of `fn(*xs)` over `tries` calls. A result that is not C-contiguous is
    charged what making it contiguous costs: its consumers pay at least that (strided reads)."""
    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        r = fn(*xs)
        if isinstance(r, np.ndarray) and not r.flags.c_contiguous:
            np.ascontiguousarray(r)
        best = min(best, time.perf_counter() - t0)
    return best


def fastest(cands: list[Callable], shapes: list, dtypes: list, tries: int = 3) -> Callable:
    """The fastest candidate on arrays of these shapes, measured now (see `timings`)."""
    best = timings(cands, [np.ones(s, d) for s, d in zip(shapes, dtypes)], tries)
    return cands[best.index(min(best))]


def timings(cands: list[Callable], xs: list[np.ndarray], tries: int = 3) -> list[float]:
    """Min seconds of each candidate on `xs` (see time_call): each called once to warm up,
    then timed in turns, so that a shared machine's load (or the first call's page faults)
    weighs on all of them alike rather than on whichever ran at a bad moment."""
    for c in cands:
        c(*xs)
    best = [float("inf")] * len(cands)
    for _ in range(tries):
        for i, c in enumerate(cands):
            best[i] = min(best[i], time_call(c, xs, 1))
    return best


def _plan_loop_aligned(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """NumPy's einsum loop after copying the smaller operand into the output's letter order
    (its contracted letters first): both then stream along the output's innermost axis."""
    small = 0 if np.prod(shapes[0]) <= np.prod(shapes[1]) else 1
    s = (a, b)[small]
    order = sorted(s, key=lambda c: (c in out, out.index(c) if c in out else s.index(c)))
    perm = tuple(s.index(c) for c in order)
    if perm == tuple(range(len(s))):
        return None
    spec = make_spec([("".join(order) if i == small else t) for i, t in enumerate((a, b))], out)

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if small == 0:
            x = np.ascontiguousarray(x.transpose(perm))
        else:
            y = np.ascontiguousarray(y.transpose(perm))
        return np.einsum(spec, x, y)
    return run


def _plan_matmul(a: str, b: str, out: str, shapes: list) -> Callable[..., np.ndarray]:
    dims = {c: d for s, sh in zip((a, b), shapes) for c, d in zip(s, sh)}
    sum_a = "".join(c for c in a if c not in b and c not in out)  # summed in one operand only
    sum_b = "".join(c for c in b if c not in a and c not in out)
    batch = "".join(c for c in out if c in a and c in b)
    contr = "".join(c for c in a if c in b and c not in out)
    fa = "".join(c for c in a if c in out and c not in b)
    fb = "".join(c for c in b if c in out and c not in a)
    size = lambda s: int(np.prod([dims[c] for c in s], dtype=np.int64))
    if not contr:
        return _plan_product(a, b, out, sum_a, sum_b)
    if out == batch + fb + fa and out != batch + fa + fb:  # swapped, the result is in order
        swapped = _plan_matmul(b, a, out, shapes[::-1])
        return lambda x, y: swapped(y, x)
    pa = [a.index(c) for c in sum_a + batch + fa + contr]
    pb = [b.index(c) for c in sum_b + batch + contr + fb]
    res = batch + fa + fb
    po = [res.index(c) for c in out]
    sa, sb = tuple(range(len(sum_a))), tuple(range(len(sum_b)))
    shp_a = (size(batch), size(fa), size(contr))
    shp_b = (size(batch), size(contr), size(fb))
    shp_r = tuple(dims[c] for c in res)

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = x.transpose(pa)
        y = y.transpose(pb)
        if sa:
            x = x.sum(sa)
        if sb:
            y = y.sum(sb)
        r = np.matmul(x.reshape(shp_a), y.reshape(shp_b)).reshape(shp_r)
        return r.transpose(po)
    return run


def _plan_product(a: str, b: str, out: str, sum_a: str, sum_b: str) -> Callable:
    """No contracted letter: a broadcasting multiply (a batched matmul of 1x1 blocks is slow)."""
    ra = "".join(c for c in a if c not in sum_a)
    rb = "".join(c for c in b if c not in sum_b)
    pa = [a.index(c) for c in sorted(ra, key=out.index)]
    pb = [b.index(c) for c in sorted(rb, key=out.index)]
    sa = tuple(a.index(c) for c in sum_a)
    sb = tuple(b.index(c) for c in sum_b)
    ea = tuple(i for i, c in enumerate(out) if c not in ra)
    eb = tuple(i for i, c in enumerate(out) if c not in rb)
    ta = tuple(np.argsort(np.argsort(pa)).tolist())
    tb = tuple(np.argsort(np.argsort(pb)).tolist())

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if sa:
            x = x.sum(sa)
        if sb:
            y = y.sum(sb)
        x = np.expand_dims(x.transpose(ta), ea)
        y = np.expand_dims(y.transpose(tb), eb)
        # a small transposed factor, made contiguous, streams without strided reads
        if x.size * 4 <= y.size:
            x = np.ascontiguousarray(x)
        elif y.size * 4 <= x.size:
            y = np.ascontiguousarray(y)
        return x * y
    return run


einsum = register(Primitive(
    "einsum", lambda *xs, spec: np.einsum(spec, *xs), _einsum_shape, _einsum_vjp,
    _einsum_batch, lower=lambda avals, spec: plan_einsum(spec, [a.shape for a in avals],
                                                         [a.dtype for a in avals])))


# --- norm: sqrt of a sum of squares, with letters as in einsum ('bdc->cd') -----------------

def _norm_shape(x: Aval, spec: str) -> Aval:
    s, t = spec.split("->")
    if len(s) != x.ndim or len(set(s)) != len(s) or len(set(t)) != len(t) or set(t) - set(s):
        raise ShapeError(f"norm '{spec}' does not fit an operand of shape {x.shape}")
    return Aval(tuple(x.shape[s.index(c)] for c in t), x.dtype)


def _norm_vjp(g: Any, ans: Any, x: Any, spec: str) -> tuple:
    from .elementwise import div
    s, t = spec.split("->")
    return (einsum(x, div(g, ans), spec=f"{s},{t}->{s}"),)  # d|x| = x / |x|


def _norm_batch(n: int, batched: tuple[bool, ...], x: Any, spec: str) -> Any:
    b = _fresh(set(spec))
    s, t = spec.split("->")
    return norm(x, spec=f"{b}{s}->{b}{t}")


def _norm_lower(avals: list[Aval], spec: str) -> Callable[..., np.ndarray]:
    s, t = spec.split("->")
    squares = plan_einsum(f"{s},{s}->{t}", [avals[0].shape] * 2, [avals[0].dtype] * 2)

    def run(x: np.ndarray) -> np.ndarray:
        r = np.asarray(squares(x, x))  # a fresh array: the root is taken in place
        return np.sqrt(r, out=r) if r.ndim else np.sqrt(r)
    return run


def _norm_impl(x: np.ndarray, spec: str) -> np.ndarray:
    s, t = spec.split("->")
    return np.sqrt(np.einsum(f"{s},{s}->{t}", x, x))


norm = register(Primitive("norm", _norm_impl, _norm_shape, _norm_vjp, _norm_batch,
                          lower=_norm_lower))


# --- muladd: einsum(x, y) + c, the add run in the product's own buffer (addmm) -------------
# c broadcasts into the product's shape (a bias), so the VJP is einsum's plus g for c.

def _add_to_product(r: np.ndarray, c: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """r + c, written into r (a fresh product) when that is safe and pays: a strided
    destination costs more than a new array."""
    if r.ndim and r.flags.c_contiguous and r.dtype == dtype:
        return np.add(r, c, out=r)
    return np.add(r, c)


def _muladd_impl(x: np.ndarray, y: np.ndarray, c: np.ndarray, spec: str) -> np.ndarray:
    r = np.asarray(np.einsum(spec, x, y))
    return _add_to_product(r, c, np.result_type(r, c))


def _muladd_shape(x: Aval, y: Aval, c: Aval, spec: str) -> Aval:
    from .elementwise import add
    prod = _einsum_shape(x, y, spec=spec)
    out = add.shape_rule(prod, c)
    if out.shape != prod.shape:
        raise ShapeError(f"muladd '{spec}': the addend of shape {c.shape} does not broadcast "
                         f"into the product's shape {prod.shape}")
    return out


def _muladd_batch(n: int, batched: tuple[bool, ...], x: Any, y: Any, c: Any, spec: str) -> Any:
    from .elementwise import add
    prod = _einsum_batch(n, batched[:2], x, y, spec=spec) if any(batched[:2]) \
        else einsum(x, y, spec=spec)
    return add.batch(n, (any(batched[:2]), batched[2]), prod, c)


def _muladd_lower(avals: list[Aval], spec: str) -> Callable[..., np.ndarray]:
    prod = plan_einsum(spec, [a.shape for a in avals[:2]], [a.dtype for a in avals[:2]])
    out = _muladd_shape(*avals, spec=spec)

    return lambda x, y, c: _add_to_product(prod(x, y), c, out.dtype)


muladd = register(Primitive(
    "muladd", _muladd_impl, _muladd_shape,
    lambda g, ans, x, y, c, spec: _einsum_vjp(g, ans, x, y, spec=spec) + (g,),
    _muladd_batch, lower=_muladd_lower))
