"""Two-operand einsums as the `lax.dot_general` that XLA's CPU backend runs fastest.

XLA runs a batched dot as lhs (batch, free, contracted) times rhs (batch, contracted, free)
and copies an operand into that order when it is not already in it. `jnp.einsum` picks the
operand order and the order of the index groups without regard to that, and the copies can
cost more than the product: seeds/001's gradient contracts wt[a,c] with H[a,b,c] over `a`,
which `jnp.einsum("ac,abc->bc")` makes a full reversal of H (3.5 ms), while H as the rhs
needs only a block swap (c to the front: 1 ms). And `W[i,j] X[a,j,k] -> [a,i,k]` is fastest
with W broadcast along `a` (a batched product with no copies of X or of the result).

`plan` tries both operand orders, the orders of the index groups found in the operands and the
output, and broadcasting the smaller operand along the larger one's leading free index; it
keeps the candidate whose copies move the fewest elements (a copy costs its size, weighted by
how badly the permutation breaks memory order). Plans depend on the spec and the shapes only
and are made while jax.jit traces, so they cost nothing per call.
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Any, NamedTuple

import jax.numpy as jnp
from jax import lax


class Plan(NamedTuple):
    """How to run one einsum: `swap` the operands, broadcast operand 0 (after the swap) to
    `bcast` (or not), transpose each operand by `perms`, dot_general with `dims`, and transpose
    the result by `out_perm`."""

    swap: bool
    bcast: tuple[int, ...] | None
    perms: tuple[tuple[int, ...], tuple[int, ...]]
    dims: tuple
    out_perm: tuple[int, ...]
    cost: float


def _blocks(perm: tuple[int, ...]) -> int:
    """The number of runs of consecutive source axes in `perm` (1: the identity)."""
    return 1 + sum(1 for a, b in itertools.pairwise(perm) if b != a + 1)


def _copy_cost(src: str, dst: str, sizes: dict[str, int]) -> float:
    """Elements moved (weighted) to bring an array from index order `src` to `dst`, ignoring
    axes of length 1. A swap of two blocks (a 2-D transpose, possibly under leading axes that
    stay) is a tiled transpose; anything else (a reversal of three axes) is far slower."""
    keep = [c for c in dst if sizes[c] > 1]
    perm = tuple(sorted(keep, key=src.index).index(c) for c in keep)
    moved = [i for i, p in enumerate(perm) if p != i]  # axes in front or behind stay
    if not moved:
        return 0.0
    size = math.prod(sizes[c] for c in keep)
    return size * (1.0 if _blocks(perm[moved[0]:moved[-1] + 1]) <= 2 else 3.0)


def _orders(group: set[str], *strings: str) -> list[str]:
    """The orders of `group`'s indices as they appear in each of `strings` (deduplicated)."""
    return list(dict.fromkeys("".join(c for c in s if c in group) for s in strings))


def _candidates(a: str, b: str, out: str, sizes: dict[str, int]) -> Any:
    """(cost, plan) for every considered way to run a,b->out as one dot_general."""
    for swap in (False, True):
        lhs, rhs = (b, a) if swap else (a, b)
        for bc in (None, *[c for c in rhs[:1] if c in out and c not in lhs]):
            x = lhs if bc is None else bc + lhs
            batch = set(x) & set(rhs) & set(out)
            contract = (set(x) & set(rhs)) - set(out)
            xf, yf = set(x) - set(rhs), set(rhs) - set(x)
            for bo, co, xo, yo in itertools.product(
                    _orders(batch, x, rhs, out), _orders(contract, x, rhs),
                    _orders(xf, x, out), _orders(yf, rhs, out)):
                want_x, want_y, got = bo + xo + co, bo + co + yo, bo + xo + yo
                cost = (_copy_cost(x, want_x, sizes) + _copy_cost(rhs, want_y, sizes)
                        + _copy_cost(got, out, sizes)
                        + (0.0 if bc is None else math.prod(sizes[c] for c in x)))
                perms = (tuple(x.index(c) for c in want_x), tuple(rhs.index(c) for c in want_y))
                nb, nx, nc = len(bo), len(xo), len(co)
                dims = ((tuple(range(nb + nx, nb + nx + nc)), tuple(range(nb, nb + nc))),
                        (tuple(range(nb)), tuple(range(nb))))
                bshape = None if bc is None else tuple(sizes[c] for c in x)
                yield Plan(swap, bshape, perms, dims, tuple(got.index(c) for c in out), cost)


@functools.lru_cache(maxsize=4096)
def plan(spec: str, shapes: tuple[tuple[int, ...], ...]) -> Plan | None:
    """The cheapest dot_general plan for a two-operand einsum `spec` on `shapes`, or None
    where jnp.einsum should run it: an index repeated within an operand (a diagonal), summed
    in one operand only (`einsum` sums those first), or no contracted index at all (an outer
    or elementwise product)."""
    ins, out = spec.split("->")
    a, b = ins.split(",")
    if len(set(a)) < len(a) or len(set(b)) < len(b) or not (set(a) & set(b)) - set(out) \
            or (set(a) ^ set(b)) - set(out):
        return None
    sizes = dict(zip(a + b, shapes[0] + shapes[1]))
    if any(sizes[c] != n for c, n in zip(a + b, shapes[0] + shapes[1])):
        return None  # (a length-1 axis against a longer one: einsum's own broadcasting)
    return min(_candidates(a, b, out, sizes), key=lambda p: p.cost)


def _transpose(x: Any, perm: tuple[int, ...]) -> Any:
    return x if perm == tuple(range(len(perm))) else jnp.transpose(x, perm)


def _own_sums(spec: str, xs: tuple) -> tuple[str, tuple]:
    """Sum each operand over the indices that only it has and the output lacks."""
    ins, out = spec.split("->")
    ops = ins.split(",")
    new, ys = [], []
    for i, (s, x) in enumerate(zip(ops, xs)):
        others = set(out).union(*[o for j, o in enumerate(ops) if j != i])
        axes = tuple(k for k, c in enumerate(s) if c not in others and s.count(c) == 1)
        new.append("".join(c for k, c in enumerate(s) if k not in axes))
        ys.append(jnp.sum(x, axes) if axes else x)
    return f"{','.join(new)}->{out}", tuple(ys)


def einsum(spec: str, *xs: Any) -> Any:
    """`jnp.einsum(spec, *xs)`, two-operand contractions through `plan`."""
    if len(xs) == 2:
        spec, xs = _own_sums(spec, xs)
    p = plan(spec, tuple(tuple(x.shape) for x in xs)) \
        if len(xs) == 2 and all(x.dtype != jnp.bool_ for x in xs) else None
    if p is None:
        return jnp.einsum(spec, *xs)
    x, y = (xs[1], xs[0]) if p.swap else xs
    if p.bcast is not None:
        x = jnp.broadcast_to(x, p.bcast)
    r = lax.dot_general(_transpose(x, p.perms[0]), _transpose(y, p.perms[1]), p.dims,
                        preferred_element_type=jnp.result_type(x, y))
    return _transpose(r, p.out_perm)


__all__ = ["Plan", "einsum", "plan"]
