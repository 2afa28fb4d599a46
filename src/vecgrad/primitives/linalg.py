"""The contraction primitive. `dot`, `matmul`, `tensordot`, `inner`, `outer`, `diag` of a
matrix and `trace` are all `einsum` with an explicit output ('ij,jk->ik')."""
from __future__ import annotations

import functools
import string
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import add, div, eq, where
from .structural import broadcast_to, reshape, transpose

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


einsum = register(Primitive(
    "einsum", lambda *xs, spec: np.einsum(spec, *xs), _einsum_shape, _einsum_vjp,
    _einsum_batch))


# --- norm: sqrt of a sum of squares, with letters as in einsum ('bdc->cd') -----------------

def _norm_shape(x: Aval, spec: str) -> Aval:
    s, t = spec.split("->")
    if len(s) != x.ndim or len(set(s)) != len(s) or len(set(t)) != len(t) or set(t) - set(s):
        raise ShapeError(f"norm '{spec}' does not fit an operand of shape {x.shape}")
    return Aval(tuple(x.shape[s.index(c)] for c in t), x.dtype)


def _norm_vjp(g: Any, ans: Any, x: Any, spec: str) -> tuple:
    # d|x| = x / |x|; at x = 0 the subgradient 0 (as hypot's and std's here, and central
    # differences), not 0 * inf = nan, which poisoned a gradient through a norm of zeros
    s, t = spec.split("->")
    return (einsum(x, div(g, where(eq(ans, 0), np.inf, ans)), spec=f"{s},{t}->{s}"),)


def _norm_batch(n: int, batched: tuple[bool, ...], x: Any, spec: str) -> Any:
    b = _fresh(set(spec))
    s, t = spec.split("->")
    return norm(x, spec=f"{b}{s}->{b}{t}")


def _norm_impl(x: np.ndarray, spec: str) -> np.ndarray:
    s, t = spec.split("->")
    return np.sqrt(np.einsum(f"{s},{s}->{t}", x, x))


norm = register(Primitive("norm", _norm_impl, _norm_shape, _norm_vjp, _norm_batch))


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
    prod = _einsum_shape(x, y, spec=spec)
    out = add.shape_rule(prod, c)
    if out.shape != prod.shape:
        raise ShapeError(f"muladd '{spec}': the addend of shape {c.shape} does not broadcast "
                         f"into the product's shape {prod.shape}")
    return out


def _muladd_batch(n: int, batched: tuple[bool, ...], x: Any, y: Any, c: Any, spec: str) -> Any:
    prod = _einsum_batch(n, batched[:2], x, y, spec=spec) if any(batched[:2]) \
        else einsum(x, y, spec=spec)
    return add.batch(n, (any(batched[:2]), batched[2]), prod, c)


muladd = register(Primitive(
    "muladd", _muladd_impl, _muladd_shape,
    lambda g, ans, x, y, c, spec: _einsum_vjp(g, ans, x, y, spec=spec) + (g,),
    _muladd_batch))
