"""The input cotangent of a convolution whose windows were read whole, by residue classes.

A convolution computed on its windows in one contraction (`einsum('dabc,bcf->daf',
windows(x), w)`, the windows copied once: im2col) gets from AD the windows' cotangent as one
outer product of the output cotangent g with the filter, added back into the overlapping
windows:

    dx[s*p + d*o] += sum_f g[p, f] w[o, c, f]        for every position p and offset o

that is `strided_add(zeros, einsum(g, w))`, the product k times the size of x, then one
strided add per offset. The offsets are the filter's (g has none), so this is the chain of
per-tap adds that batch/col2im.py already turns into one product by residue classes
(sub-pixel col2im: position y = s*q + r of x gathers g's windows at its residue's taps),
only written as one add with an offset axis. This rule reads the add's view as those taps
(one region of slices per offset) and hands them to col2im's product, g's windows copied
once (positions, taps, channels). Taken where the filter contracts a letter with g (a filter
bank: one-channel patches at stride 3 measured 165 -> 201 us with it) and the pass count
says it beats the add (`_one_add_cost`, weights fitted on 66 measured convolutions).
Measured (grad, process time, load 4-8): stride-2 5-tap convolution along the middle axis
of (8, 601, 8) 331 -> 229 us, 5 x 5 patches at stride 2 of (61, 61, 8) into 8 outputs
900 -> 490 us, 3 x 3 of (61, 61, 8) into 16 outputs 389 -> 309 us, dilated taps at
stride 3 928 -> 774 us; 6-row windows at stride 3 into 32 outputs keep the add (254 us,
268 with the product).
"""
from __future__ import annotations

import math

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from ..primitives.linalg import parse_spec
from ..rewrite.engine import Ctx
from .col2im import MAX_TAPS, _residues, residue_cost, sub_pixel
from .winadds import added_einsum
from .windows import _overlaps


def _roles(dims: tuple, out: str, offs: set, nd: int) -> dict | None:
    """For each base axis, the view axis (one not in `offs`) that steps along it alone, at a
    positive step; None unless they pair one to one and the offsets step along those axes."""
    axis_of: dict[int, int] = {}
    for k, (n, st) in enumerate(dims):
        if out[k] in offs:
            continue
        moved = [j for j, s in enumerate(st) if s]
        if len(moved) != 1 or st[moved[0]] <= 0 or moved[0] in axis_of:
            return None
        axis_of[moved[0]] = k
    if len(axis_of) != nd:
        return None
    return axis_of


def _regions(start: tuple, dims: tuple, loops: list[int], axis_of: dict, nd: int
             ) -> list[tuple]:
    """One region of slices of the base per combination of the offset axes (row-major)."""
    regions = []
    for combo in np.ndindex(*[dims[k][0] for k in loops]):
        at = list(start)
        for k, i in zip(loops, combo):
            at = [a + i * s for a, s in zip(at, dims[k][1])]
        idx = []
        for j in range(nd):
            n, st = dims[axis_of[j]]
            idx.append(P.Sl(at[j], at[j] + (n - 1) * st[j] + 1, st[j]))
        regions.append(tuple(idx))
    return regions


# Weights of the comparison below, fitted on 66 strided convolutions (1-D along the middle
# axis of a batch and of flattened rows, 2-D patches; strides 2, 3; 3 to 8 taps; 4 to 16
# channels into 8 to 32 outputs; grad time with the product taken against the add, process
# time, load 11-14): none slower where taken, 26 of the 36 gains over 5% taken (col2im's
# own weights, a multiply-add a quarter pass, take 9); missed: 2-D 3 x 3 at stride 2 of 4
# channels into 16 (1.32x) and flattened rows (1.06-1.17x).
MAC = 1 / 16  # a BLAS multiply-add, in element passes
ADD = 4  # passes per element of a strided read-modify-write (runs of a row's channels)
MOVED = 1  # passes per output element of the (m, r) interleave of two strided axes


def _one_add_cost(m: int, positions: int, F: int, ch: int) -> float:
    """The outer product and the add through the windows, in element passes: the product's
    multiply-adds and its write, then each offset's read-modify-write of a strided slice."""
    terms = m * positions * ch
    return terms * F * MAC + terms + ADD * terms


def windows_added_by_residues(e: Eqn, c: Ctx) -> object:
    """strided_add(base, einsum(g, w)) over overlapping windows whose offsets are w's letters
    alone (a convolution's input cotangent) = base[region] += one product of g's windows
    with w placed by residue class (col2im's sub-pixel product), not one add per offset."""
    s = added_einsum(e, c, "f")
    dims = e.params["dims"]
    if s is None or not _overlaps(e.inputs[0].aval.shape, dims):
        return None
    ins, out = parse_spec(s.params["spec"])
    if any(len(set(t)) != len(t) for t in ins + [out]):
        return None
    both = set(ins[0]) & set(ins[1])
    if both & set(out) or set(ins[0] + ins[1]) - both != set(out):
        return None  # (a letter summed in one operand alone, or a batch letter: not taps)
    for side in (0, 1):
        # the offsets: w's axes stepping along a base axis that one of g's axes steps along
        g_moves = {j for k, ch in enumerate(out) if ch in ins[side]
                   for j, st in enumerate(dims[k][1]) if st}
        offs = {ch for k, ch in enumerate(out) if ch in ins[1 - side] and dims[k][0] > 1 and
                any(st and j in g_moves for j, st in enumerate(dims[k][1]))}
        if offs:
            found = _plan(e, c, s, ins, out, side, offs)
            if found is not None:
                return found
    return None


def _plan(e: Eqn, c: Ctx, s: Eqn, ins: list[str], out: str, side: int, offs: set) -> object:
    start, dims = e.params["start"], e.params["dims"]
    base = e.inputs[0]
    nd = base.aval.ndim
    axis_of = _roles(dims, out, offs, nd)
    if axis_of is None:
        return None
    loops = [k for k, ch in enumerate(out) if ch in offs]
    m = math.prod(dims[k][0] for k in loops)
    if m > MAX_TAPS:
        return None
    P_axes = [j for j in range(nd) if out[axis_of[j]] in ins[side]]
    moved = {j for k in loops for j, st in enumerate(dims[k][1]) if st}
    if not moved <= set(P_axes) or any(dims[k][0] > 1 and not any(dims[k][1]) for k in range(
            len(dims))):
        return None  # (an offset moving along a channel axis, or a broadcast axis)
    regions = _regions(start, dims, loops, axis_of, nd)
    kl = "".join(ch for ch in ins[side] if ch not in out)
    g, w = s.inputs[side], s.inputs[1 - side]
    gp = [g.aval.shape[ins[side].index(out[axis_of[j]])] for j in P_axes]
    res = _residues([(None, r) for r in regions], P_axes, gp, bool(kl))
    rows = math.prod(base.aval.shape[j] for j in P_axes)
    chs = math.prod(dims[axis_of[j]][0] for j in range(nd) if j not in P_axes)
    F = g.aval.size // max(1, math.prod(gp))
    if not kl or res is None or residue_cost(res, rows, gp, F, chs, MAC, MOVED) >= \
            _one_add_cost(m, math.prod(gp), F, chs):
        return None
    # w with its offset axes first, merged into one tap axis in the regions' order
    wl = ins[1 - side]
    lead = "".join(out[k] for k in loops)
    rest = "".join(ch for ch in wl if ch not in offs)
    if wl != lead + rest:
        w = c.emit(P.transpose, (w,), {"perm": tuple(wl.index(ch) for ch in lead + rest)},
                   e.src)
    w = c.emit(P.reshape, (w,), {"shape": (m,) + w.aval.shape[len(lead):]}, e.src)
    link_out = "".join(out[axis_of[j]] for j in range(nd))
    return sub_pixel(e, c, base, (g, ins[side]), (w, rest), link_out, res, P_axes, kl,
                     regions[0], copy=True)


__all__ = ["windows_added_by_residues"]
