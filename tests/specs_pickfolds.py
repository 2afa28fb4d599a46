"""Specs of the running selections with other tie and NaN rules than builtins.max's
(primitives/pickfolds.py), each against a plain Python loop of the selection it stands for
(`latest`: an equal x wins; `restart`: x wins unless the keeping comparison holds, so a NaN
either side lets x win). The value's gradient is checked by central differences; ties and
NaNs, where central differences say nothing, are in tests/test_pickfolds.py."""
from __future__ import annotations

import numpy as np
from spec_lib import Spec, normal, small_ints

SHAPES = [((9,), 0), ((6, 3), 0), ((3, 7, 2), 1)]
RULES = [(True, False), (False, True), (True, True)]  # (latest, restart)


def x_wins(x, c, greater: bool, latest: bool, restart: bool) -> bool:
    """Does the new item x replace the carried value c (the loop's own comparison)?"""
    if restart:  # c kept where `c > x` (latest) or `c >= x`: False with a NaN either side
        keep = (c > x if latest else c >= x) if greater else (c < x if latest else c <= x)
        return not keep
    return bool((x >= c if latest else x > c) if greater else (x <= c if latest else x < c))


def pick_ref(x: np.ndarray, axis: int, greater: bool, latest: bool, restart: bool,
             shift: float = 0.0):
    """Running values and winners of the selection along axis, element by element (the
    carried side c + shift)."""
    x0 = np.moveaxis(x, axis, 0)
    val, won = np.empty_like(x0), np.zeros(x0.shape, np.intp)
    for j in np.ndindex(x0.shape[1:]):
        c, w = x0[(0,) + j], 0
        for t in range(x0.shape[0]):
            if t:
                c = c + x0.dtype.type(shift) if shift else c
                if x_wins(x0[(t,) + j], c, greater, latest, restart):
                    c, w = x0[(t,) + j], t
            val[(t,) + j], won[(t,) + j] = c, w
    return np.moveaxis(val, 0, axis), np.moveaxis(won, 0, axis)


def won_ref(a0, x0, t, greater, latest, restart, shift=0.0) -> bool:
    """The record rule of primitives/pickfolds.py, element by element (any ans and x)."""
    if shift:
        return x_wins(x0[t], a0[t - 1] + shift, greater, latest, restart)
    if latest:
        return bool(x0[t] == a0[t] or restart and np.isnan(x0[t]))
    if restart:
        return bool(a0[t] != a0[t - 1])
    return bool(a0[t] > a0[t - 1] if greater else a0[t] < a0[t - 1])


def winner_ref(ans, x, axis, greater, latest, restart, shift=0.0) -> np.ndarray:
    a0, x0 = np.moveaxis(ans, axis, 0), np.moveaxis(x, axis, 0)
    won = np.zeros(a0.shape, np.intp)
    for t in range(1, a0.shape[0]):
        for j in np.ndindex(a0.shape[1:]):
            rec = won_ref(a0[(slice(None),) + j], x0[(slice(None),) + j], t, greater, latest,
                          restart, shift)
            won[(t,) + j] = t if rec else won[(t - 1,) + j]
    return np.moveaxis(won, 0, axis)


def scatter_ref(g, ans, x, axis, greater, latest, restart, shift=0.0) -> np.ndarray:
    w0 = np.moveaxis(winner_ref(ans, x, axis, greater, latest, restart, shift), axis, 0)
    g0 = np.moveaxis(np.broadcast_to(g, ans.shape), axis, 0)
    out = np.zeros(g0.shape, g.dtype)
    for t in np.ndindex(g0.shape):
        out[(w0[t],) + t[1:]] += g0[t]
    return np.moveaxis(out, 0, axis)


def _p(a: int, gr: bool, la: bool, rs: bool, sh: float = 0.0) -> dict:
    return {"axis": a, "greater": gr, "latest": la, "restart": rs, "shift": sh}


def _label(s: tuple, a: int, gr: bool, la: bool, rs: bool, sh: float = 0.0) -> str:
    return f"{'max' if gr else 'min'}{'-latest' if la else ''}{'-restart' if rs else ''}" \
        f"{f'-shift{sh:g}' if sh else ''}-{s}-{a}"


# every rule on every shape, max and min alternating (9 specs per primitive), and every rule
# with a shift (max-plus: the carried side c + a) on one shape each
_ALL = [(s, a, (i + j) % 2 == 0, la, rs) for i, (s, a) in enumerate(SHAPES)
        for j, (la, rs) in enumerate(RULES)] + \
    [(s, a, (i + j) % 2 == 1, la, rs, sh) for i, (s, a) in enumerate(SHAPES)
     for j, (la, rs) in enumerate(RULES + [(False, False)]) for sh in [(-0.3, 0.25)[i % 2]]
     if (i + j) % 3 == 0]

SPECS: list[Spec] = [
    *[Spec("fold_pick", (s,), lambda x, k=k: pick_ref(x, *k[1:])[0], _p(*k[1:]),
           label=_label(*k)) for k in _ALL for s in [k[0]]],
    *[Spec("fold_pick_winner", (s, s), lambda a, x, k=k: winner_ref(a, x, *k[1:]),
           _p(*k[1:]), gens=small_ints, label=_label(*k)) for k in _ALL for s in [k[0]]],
    *[Spec("fold_pick_scatter", (s, s, s), lambda g, a, x, k=k: scatter_ref(g, a, x, *k[1:]),
           _p(*k[1:]), gens=(normal, small_ints, small_ints), wrt=(0,), label=_label(*k))
      for k in _ALL for s in [k[0]]],
]
