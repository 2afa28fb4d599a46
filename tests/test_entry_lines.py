"""The user's line of each traced operation, noted where the user's call enters vecgrad
(builder.entry: operators, indexing, array methods and NumPy's protocols note their caller's
frame once) instead of a walk over vecgrad's frames per equation. Every equation of a trace
must still name the user's own file, line and function: in helpers the user calls, lambdas,
comprehensions, generator expressions, kernels passed as arguments, functions NumPy calls
back (np.apply_along_axis), Python's sum and functools.reduce, and in-place writes. Lines
that record operations carry a `# L:<program>` mark; each program's traced equations must
name exactly its marked lines. Errors raised inside a helper name the helper's line."""
from __future__ import annotations

import functools
import operator
import re

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import ShapeError

R = np.random.default_rng(28)


def _marks() -> dict[str, set[int]]:
    """program name -> the lines of this file marked as recording its operations"""
    out: dict[str, set[int]] = {}
    with open(__file__) as fh:
        for n, line in enumerate(fh, 1):
            m = re.search(r"# L:([\w,]+)$", line.rstrip())
            if m:
                for name in m.group(1).split(","):
                    out.setdefault(name, set()).add(n)
    return out


MARKS = _marks()


def scaled(a, b):
    return a * b + 1.0  # L:ops


def ops(x, w):
    s = 0.0
    for i in range(3):
        s = s + x[i] * 2.0  # L:ops
        s = s - scaled(x[i + 1], w[i])  # L:ops
    m = x.reshape(3, 2).T  # L:ops
    s = s + m.sum() * np.sum(np.sin(m)) - (-m[0, 1]) ** 2  # L:ops
    return s / vnp.mean(x @ w)  # L:ops


def comps(x, w):
    sq = lambda t: t ** 2 * w[1]  # L:comps
    ys = [sq(x[i]) for i in range(4)]  # L:comps
    z = sum(y * w[0] for y in ys)  # L:comps
    return functools.reduce(operator.mul, [z, x[0], np.tanh(z)])  # L:comps


def cos_kernel(u, v):
    return (u * v).sum() / np.sqrt((u * u).sum() * (v * v).sum())  # L:kern


def pairwise(a, b, K=cos_kernel):
    out = vnp.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            out[i, j] = K(a[:, i], b[:, j])  # L:kern
    return (out ** 2).sum()  # L:kern


def row_norm(r):
    return np.sqrt((r * r).sum() + 1.0)  # L:callback


def callback(x):
    y = np.apply_along_axis(row_norm, 1, x)  # L:callback
    return (y * np.exp(x[:, 0])).sum()  # L:callback


def bump(buf, k, v):
    buf[k] += v * v  # L:writes


def writes(x, w):
    buf = vnp.zeros((3, 4))
    for i in range(3):
        buf[i] = x[i] * w[:4]  # L:writes
        bump(buf, (i, 1), x[i + 1])  # L:writes
    buf[:, 2] *= 3.0  # L:writes
    col = buf[:, 3]  # L:writes
    col -= x[:3]  # L:writes
    return np.sum(buf ** 2)  # L:writes


def nested(x, w):
    inner = vg.grad(lambda t: np.sum(np.sin(t) * w))  # L:nested
    return np.sum(inner(x) * x)  # L:nested


def lists(x, w):
    pairs = [x[i] * w[i] for i in range(3)]  # L:lists
    v = np.array(pairs)  # L:lists
    return np.mean([v[0], np.sum(v)]) + np.dot([x[0], x[1]], w[:2])  # L:lists


PROGRAMS = {
    "lists": (lists, lambda: (R.standard_normal(3), R.standard_normal(3))),
    "ops": (ops, lambda: (R.standard_normal(6), R.standard_normal(6))),
    "comps": (comps, lambda: (R.standard_normal(4), R.standard_normal(2))),
    "kern": (pairwise, lambda: (R.standard_normal((3, 2)), R.standard_normal((3, 2)))),
    "callback": (callback, lambda: (R.standard_normal((3, 4)),)),
    "writes": (writes, lambda: (R.standard_normal(4), R.standard_normal(5))),
    "nested": (nested, lambda: (R.standard_normal(5), R.standard_normal(5))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_equation_names_the_users_line(name):
    fn, make = PROGRAMS[name]
    args = make()
    e, _ = vg.grad(fn, argnums=0).entry(*args)
    srcs = {q.src for q in e.stages["traced"].eqns}
    assert None not in srcs
    assert {s.file for s in srcs} == {__file__}
    assert {s.line for s in srcs} == MARKS[name]
    funcs = {s.func for s in srcs}  # (the enclosing function of each line, as Python names it)
    assert funcs <= {"<lambda>", "<listcomp>", "<genexpr>", "scaled", "ops", "comps",
                     "cos_kernel", "pairwise", "row_norm", "callback", "bump", "writes",
                     "nested", "lists"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_match_central_differences(name):
    fn, make = PROGRAMS[name]
    args = make()
    x = args[0]
    g = vg.grad(fn, argnums=0)(*args)
    d = R.standard_normal(x.shape)
    h = 1e-6
    num = (fn(*((x + h * d,) + args[1:]), ) - fn(*((x - h * d,) + args[1:]))) / (2 * h) \
        if name != "nested" else None
    if num is None:  # (vg.grad inside: the NumPy function is the traced one)
        num = (vg.jit(fn)(x + h * d, *args[1:]) - vg.jit(fn)(x - h * d, *args[1:])) / (2 * h)
    assert np.sum(g * d) == pytest.approx(float(num), rel=1e-5, abs=1e-7)


def mismatched(a, b):
    return a[:2] + b  # (2,) + (3,): a ShapeError on this line


def shapes_off(x):
    return np.sum(mismatched(x, x[:3]) * 2.0)


def test_an_error_in_a_helper_names_the_helpers_line():
    with pytest.raises(ShapeError) as ex:
        vg.grad(shapes_off)(np.ones(4))
    line = mismatched.__code__.co_firstlineno + 1
    assert f"{__file__}:{line}" in str(ex.value) or f"test_entry_lines.py:{line}" in str(ex.value)
