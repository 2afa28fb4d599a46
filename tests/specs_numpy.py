"""Specs of the NumPy-API primitives: the remaining elementwise ufuncs, cumulative scans,
sorting and the traced-index gather/scatter pair."""
from __future__ import annotations

import numpy as np
from spec_lib import Spec, away0, binary, boolean, normal, positive, small_ints, unary, with_zeros


def unit(r, s):
    return r.uniform(-0.9, 0.9, s)


def above1(r, s):
    return r.uniform(1.2, 3.0, s)


def off_half(r, s):
    """Values away from the rounding boundaries x.5 (and from integers, where floor jumps)."""
    return r.integers(-4, 4, s) + r.uniform(0.1, 0.4, s) * r.choice([1, 3], s)


def ints(r, s):
    return r.integers(-6, 7, s)


def with_nonfinite(r, s):
    x = r.standard_normal(s)
    flat = x.reshape(-1)
    flat[:: 3] = np.array([np.nan, np.inf, -np.inf] * len(flat))[: len(flat[::3])]
    return x


def ties(r, s):
    """Normal values with ties and NaNs (fmax/fmin)."""
    x = r.integers(0, 3, s).astype(np.float64)
    x.reshape(-1)[::5] = np.nan
    return x


def away_int(r, s):
    """Divisors whose quotients stay away from integers (remainder jumps there)."""
    return r.choice([-1.0, 1.0], s) * r.uniform(0.7, 0.9, s)


def zeros_some(r, s):
    x = away0(r, s)
    x.reshape(-1)[1::4] = 0.0
    return x


def small_ints_f(r, s):
    return r.integers(-1, 6, s).astype(float)


def perm_index(n, axis):
    """Random permutations along `axis` (a traced index, as argsort would give)."""
    def gen(r, s):
        return np.argsort(r.random(s), axis=axis)
    return gen


def repeated_index(n):
    def gen(r, s):
        return r.integers(-n, n, s)
    return gen


U = ((3, 4),)
AXES = [((3, 4, 5), 0), ((3, 4, 5), 2), ((7,), 0)]


def cumprod_grad_ref(g, c, x, axis):
    """c[t-1] * lam[t] with lam[t] = g[t] + x[t+1] lam[t+1] along axis, step by step."""
    g, c, x = (np.moveaxis(v, axis, 0) for v in (g, c, x))
    lam = np.zeros(g.shape, np.result_type(g, c, x))
    for t in range(g.shape[0] - 1, -1, -1):
        lam[t] = g[t] + (x[t + 1] * lam[t + 1] if t + 1 < g.shape[0] else 0)
    before = np.concatenate([np.ones_like(c[:1]), c[:-1]])
    return np.moveaxis(before * lam, 0, axis)

SPECS: list[Spec] = [
    # unary elementwise
    unary("tan", np.tan, unit),
    unary("sinh", np.sinh),
    unary("cosh", np.cosh),
    unary("arcsin", np.arcsin, unit),
    unary("arccos", np.arccos, unit),
    unary("arctan", np.arctan),
    unary("arcsinh", np.arcsinh),
    unary("arccosh", np.arccosh, above1),
    unary("arctanh", np.arctanh, unit),
    unary("log2", np.log2, positive),
    unary("log10", np.log10, positive),
    unary("exp2", np.exp2),
    unary("cbrt", np.cbrt, away0),
    unary("reciprocal", np.reciprocal, away0),
    unary("fabs", np.fabs, away0),
    unary("sinc", np.sinc),
    unary("deg2rad", np.deg2rad),
    unary("rad2deg", np.rad2deg),
    Spec("sinc", ((5,),), np.sinc, gens=lambda r, s: np.array([0.0, 1.0, -2.0, 0.5, 1e-3]),
         label="at-zero-and-integers"),
    Spec("nan_to_num", U, lambda x: np.nan_to_num(x), {"nan": 0.0, "posinf": None,
                                                       "neginf": None}),
    Spec("nan_to_num", U, lambda x: np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
         {"nan": -1.0, "posinf": 9.0, "neginf": -9.0}, with_nonfinite, label="nonfinite"),
    unary("floor", np.floor, off_half),
    unary("ceil", np.ceil, off_half),
    unary("trunc", np.trunc, off_half),
    unary("rint", np.rint, off_half),
    unary("fix", np.fix, off_half),
    Spec("round", U, lambda x: np.round(x, 1), {"decimals": 1}, off_half, label="1"),
    Spec("round", U, np.round, {"decimals": 0}, off_half, label="0"),
    Spec("round", ((3, 4),), lambda x: np.round(x, -1), {"decimals": -1},
         gens=lambda r, s: r.integers(-99, 99, s) + 0.0, label="neg-decimals"),
    unary("isnan", np.isnan, with_nonfinite),
    unary("isinf", np.isinf, with_nonfinite),
    unary("isfinite", np.isfinite, with_nonfinite),
    unary("signbit", np.signbit),
    unary("invert", np.invert, boolean),
    Spec("invert", U, np.invert, gens=ints, label="ints"),
    unary("frexp_exponent", lambda x: np.frexp(x)[1], away0),
    # binary elementwise
    binary("logaddexp", np.logaddexp),
    binary("logaddexp2", np.logaddexp2),
    binary("arctan2", np.arctan2, (normal, away0)),
    binary("hypot", np.hypot, (away0, away0)),
    binary("remainder", np.remainder, (normal, away_int)),
    binary("fmod", np.fmod, (normal, away_int)),
    binary("copysign", np.copysign, (away0, away0)),
    binary("heaviside", np.heaviside, (lambda r, s: r.integers(-1, 2, s).astype(float), normal),
           wrt=(1,)),
    binary("fmax", np.fmax, (normal, ties)),
    binary("fmin", np.fmin, (ties, normal)),
    binary("floor_divide", np.floor_divide, (normal, away_int)),
    binary("logical_xor", np.logical_xor, boolean),
    binary("bitwise_and", np.bitwise_and, ints),
    binary("bitwise_or", np.bitwise_or, boolean),
    binary("bitwise_xor", np.bitwise_xor, ints),
    binary("left_shift", np.left_shift, (ints, lambda r, s: r.integers(0, 4, s))),
    binary("right_shift", np.right_shift, (ints, lambda r, s: r.integers(0, 4, s))),
    binary("gcd", np.gcd, ints),
    binary("lcm", np.lcm, ints),
    binary("nextafter", np.nextafter),
    unary("spacing", np.spacing),
    unary("bitwise_count", np.bitwise_count, ints),
    # cumulative scans
    *[Spec("cumsum", (s,), lambda x, a=a: np.cumsum(x, a), {"axis": a, "reverse": False},
           label=f"{s}-{a}") for s, a in AXES],
    Spec("cumsum", ((3, 4, 5),), lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1),
         {"axis": 1, "reverse": True}, label="reverse"),
    Spec("cumsum", ((3, 4),), lambda x: np.cumsum(x, 1), {"axis": 1, "reverse": False},
         gens=boolean, label="bool-int64"),
    *[Spec("cumprod", (s,), lambda x, a=a: np.cumprod(x, a), {"axis": a}, away0,
           label=f"{s}-{a}") for s, a in AXES],
    Spec("cumprod", ((4, 9),), lambda x: np.cumprod(x, 1), {"axis": 1}, zeros_some,
         label="zeros"),
    Spec("cumprod", ((9, 4),), lambda x: np.cumprod(x, 0), {"axis": 0}, zeros_some,
         label="zeros-axis0"),
    Spec("cumprod", ((3, 6),), lambda x: np.cumprod(x, 1), {"axis": 1}, with_zeros(2),
         label="leading-zeros"),
    # (c drawn apart from x here: the recurrence form; tests/test_cumprod_grad.py draws
    # c = cumprod(x), the division form)
    *[Spec("cumprod_grad", (s, s, s), lambda g, c, x, a=a: cumprod_grad_ref(g, c, x, a),
           {"axis": a}, gens=(normal, normal, away0), label=f"{s}-{a}") for s, a in AXES],
    Spec("cumprod_grad", ((6, 3),) * 3, lambda g, c, x: cumprod_grad_ref(g, c, x, 0),
         {"axis": 0}, gens=(normal, zeros_some, zeros_some), label="zeros"),
    *[Spec(n, (s,), lambda x, a=a, f=f: f.accumulate(x, a), {"axis": a}, label=f"{s}-{a}")
      for n, f in [("cummax", np.maximum), ("cummin", np.minimum)] for s, a in AXES[:2]],
    # sorting
    *[Spec("sort", (s,), lambda x, a=a: np.sort(x, a), {"axis": a, "kind": None},
           label=f"{s}-{a}") for s, a in AXES],
    Spec("sort", ((3, 8),), lambda x: np.sort(x, 1, "stable"), {"axis": 1, "kind": "stable"},
         label="stable"),
    *[Spec("argsort", (s,), lambda x, a=a: np.argsort(x, a, "stable"),
           {"axis": a, "kind": "stable"}, label=f"{s}-{a}") for s, a in AXES],
    Spec("partition", ((3, 8),), lambda x: np.partition(x, 3, 1), {"axis": 1, "kth": (3,)}),
    Spec("partition", ((9, 2),), lambda x: np.partition(x, (1, 6), 0),
         {"axis": 0, "kth": (1, 6)}, label="two-kth"),
    Spec("argpartition", ((3, 8),), lambda x: np.argpartition(x, 3, 1),
         {"axis": 1, "kth": (3,)}),
    *[Spec(n, ((3, 4, 5),), lambda x, a=a, f=f: f(x, a), {"axis": a}, label=str(a))
      for n, f in [("argmax", np.argmax), ("argmin", np.argmin)] for a in (0, 2)],
    Spec("nonempty", ((3, 4),), lambda m: m, {"axes": (1,), "error": "ValueError", "msg": ""},
         gens=lambda r, s: np.eye(*s, dtype=bool) | (r.random(s) > 0.5)),  # (rows select)
    Spec("searchsorted", ((6,), (3, 4)), lambda a, v: np.searchsorted(a, v),
         {"side": "left"}, gens=(lambda r, s: np.sort(r.integers(0, 5, s)).astype(float),
                                 small_ints_f), label="left"),
    Spec("searchsorted", ((6,), (5,)), lambda a, v: np.searchsorted(a, v, "right"),
         {"side": "right"}, gens=(lambda r, s: np.sort(r.integers(0, 5, s)).astype(float),
                                  small_ints_f), label="right"),
    # traced-index gather and its transpose
    Spec("take_along", ((3, 5), (3, 5)), lambda x, i: np.take_along_axis(x, i, 1),
         {"axis": 1}, gens=(normal, perm_index(5, 1)), label="perm"),
    Spec("take_along", ((4, 3), (6, 3)), lambda x, i: np.take_along_axis(x, i, 0),
         {"axis": 0}, gens=(normal, repeated_index(4)), label="repeats-negative"),
    Spec("take_along", ((3, 5, 2), (1, 4, 2)), lambda x, i: np.take_along_axis(x, i, 1),
         {"axis": 1}, gens=(normal, repeated_index(5)), label="broadcast-index"),
    Spec("take_along", ((1, 5), (3, 2)), lambda x, i: np.take_along_axis(x, i, 1),
         {"axis": 1}, gens=(normal, repeated_index(5)), label="broadcast-array"),
    # x broadcast off the axis in a dimension after it, the index in one before it: the VJP
    # moves the broadcast dimension into the axis before scattering
    Spec("take_along", ((4, 1, 3), (1, 5, 6)), lambda x, i: np.take_along_axis(x, i, 2),
         {"axis": 2}, gens=(normal, repeated_index(3)), label="broadcast-array-moved"),
    Spec("scatter_add_along", ((3, 5), (3, 5)),
         lambda g, i: _scatter_ref(g, i, 1, 5), {"axis": 1, "size": 5},
         gens=(normal, perm_index(5, 1)), label="perm"),
    Spec("scatter_add_along", ((3, 5), (3, 5)),
         lambda g, i: _scatter_ref(g, i, 1, 5), {"axis": 1, "size": 5, "unique": True},
         gens=(normal, perm_index(5, 1)), label="perm-unique"),
    Spec("scatter_add_along", ((4, 3), (4, 1)),
         lambda g, i: _scatter_ref(g, i, 0, 6), {"axis": 0, "size": 6},
         gens=(normal, repeated_index(6)), label="rows"),
    Spec("scatter_add_along", ((6, 3), (6, 3)),
         lambda g, i: _scatter_ref(g, i, 0, 4), {"axis": 0, "size": 4},
         gens=(normal, repeated_index(4)), label="repeats"),
    Spec("scatter_add_along", ((2, 4, 3), (1, 4, 3)),
         lambda g, i: _scatter_ref(g, i, 1, 6), {"axis": 1, "size": 6},
         gens=(normal, repeated_index(6)), label="broadcast-index"),
]


def _reduce_at_ref(a, v, idx, axis, op):
    """np.<op>.at along `axis` (Python's max for builtin_max), one application at a time in
    index order."""
    out = a.copy()
    idx = np.broadcast_to(idx, v.shape) % a.shape[axis]
    fn = {"builtin_max": max, "builtin_min": min}.get(op) or getattr(np, op)
    for pos in np.ndindex(*v.shape):
        tgt = pos[:axis] + (idx[pos],) + pos[axis + 1:]
        out[tgt] = fn(out[tgt], v[pos])
    return out


def _some_zeros(r, s):
    x = r.standard_normal(s)
    x[r.random(s) < 0.3] = 0.0
    return x



def _shares_ref(g, a, v, idx, ans, axis):
    """The winners of each position (a's entry, each value equal to ans there) share g."""
    idx = np.broadcast_to(idx, v.shape) % a.shape[axis]
    hit_a, cnt = a == ans, (a == ans).astype(float)
    hits = np.zeros(v.shape, bool)
    for pos in np.ndindex(*v.shape):
        tgt = pos[:axis] + (idx[pos],) + pos[axis + 1:]
        hits[pos] = v[pos] == ans[tgt]
        cnt[tgt] += hits[pos]
    share = g / np.maximum(cnt, 1).astype(g.dtype)
    gv = np.zeros(v.shape, g.dtype)
    for pos in np.ndindex(*v.shape):
        gv[pos] = share[pos[:axis] + (idx[pos],) + pos[axis + 1:]] * hits[pos]
    return np.concatenate([share * hit_a, gv], axis)


def _shares_specs():
    """Values of 0, 1, 2 (many ties, hits and misses) at repeated positions."""
    gens = (normal, small_ints, small_ints, None, small_ints)
    return [Spec("winner_shares", ((5,), (5,), (9,), (9,), (5,)),
                 lambda *xs: _shares_ref(*xs, 0), {"axis": 0},
                 gens=gens[:3] + (repeated_index(5),) + gens[4:], wrt=(0,), label="1-d"),
            Spec("winner_shares", ((4, 3), (4, 3), (7, 3), (7, 1), (4, 3)),
                 lambda *xs: _shares_ref(*xs, 0), {"axis": 0},
                 gens=gens[:3] + (repeated_index(4),) + gens[4:], wrt=(0,), label="rows"),
            Spec("winner_shares", ((4, 3), (4, 3), (7, 3), (7, 3), (4, 3)),
                 lambda *xs: _shares_ref(*xs, 0), {"axis": 0},
                 gens=gens[:3] + (repeated_index(4),) + gens[4:], wrt=(0,), label="entries"),
            Spec("winner_shares", ((2, 5), (2, 5), (2, 6), (2, 6), (2, 5)),
                 lambda *xs: _shares_ref(*xs, 1), {"axis": 1},
                 gens=gens[:3] + (repeated_index(5),) + gens[4:], wrt=(0,), label="per-row")]


def _reduce_at_specs():
    out = []
    for op in ("maximum", "minimum", "multiply"):
        gens = (_some_zeros, _some_zeros) if op == "multiply" else (normal, normal)
        out += [
            Spec("scatter_reduce_along", ((4, 3), (7, 3), (7, 1)),
                 lambda a, v, i, op=op: _reduce_at_ref(a, v, i, 0, op), {"axis": 0, "op": op},
                 gens=gens + (repeated_index(4),), label=f"{op}-rows"),
            Spec("scatter_reduce_along", ((2, 5), (2, 6), (2, 6)),
                 lambda a, v, i, op=op: _reduce_at_ref(a, v, i, 1, op), {"axis": 1, "op": op},
                 gens=gens + (repeated_index(5),), label=f"{op}-per-row"),
        ]
    for op in ("builtin_max", "builtin_min"):  # (Python's max: a NaN value never wins)
        out += [
            Spec("scatter_reduce_along", ((6,), (9,), (9,)),
                 lambda a, v, i, op=op: _reduce_at_ref(a, v, i, 0, op), {"axis": 0, "op": op},
                 gens=(normal, normal, repeated_index(6)), label=op),
            Spec("scatter_reduce_along", ((4, 3), (7, 3), (7, 1)),
                 lambda a, v, i, op=op: _reduce_at_ref(a, v, i, 0, op), {"axis": 0, "op": op},
                 gens=(normal, normal, repeated_index(4)), label=f"{op}-rows"),
        ]
    return out


def _scatter_ref(g, idx, axis, n):
    s = np.broadcast_shapes(g.shape, idx.shape)
    out = np.zeros(s[:axis] + (n,) + s[axis + 1:], g.dtype)
    idx = np.broadcast_to(idx, s) % n
    g = np.broadcast_to(g, s)
    for pos in np.ndindex(*s):
        tgt = pos[:axis] + (idx[pos],) + pos[axis + 1:]
        out[tgt] += g[pos]
    return out


SPECS += _reduce_at_specs()
SPECS += _shares_specs()
