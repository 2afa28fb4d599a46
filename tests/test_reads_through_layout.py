"""Basic reads through layout (rewrite/reads.py): x[w][r] is one read, reshape(x)[j::k] a
read of x where the reshape flattened the axes read apart, broadcast_to(x)[.., j, ..] a read
of x. Loops that unpack a few values per iteration (`i, j = np.argsort(r)[-2:]`) then read
the arrays themselves: a gather through an argsort read at a few positions becomes the sort
read there (no argsort). Values against NumPy, gradients by central differences, batched
equals unbatched; the reads composed against NumPy on random slices (negative steps, ints,
empty and one-wide reads)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

RNG = np.random.default_rng(7)
X = RNG.standard_normal((7, 9))
P2 = RNG.standard_normal((8, 2))


def top_gap(X):
    tot = 0.0
    for r in X:
        i, j = np.argsort(r)[-2:]
        tot = tot + np.tanh(r[j] - r[i])
    return tot


def low_pair(X):
    tot = 0.0
    for r in X:
        i, j = np.argsort(r)[:2]
        tot = tot + r[i] * r[j]
    return tot


def sorted_ends(X):
    tot = 0.0
    for r in X:
        lo, mid, hi = np.sort(r)[[0, 4, -1]]
        tot = tot + (hi - lo) * mid
    return tot


def middle_three(X):
    out = vnp.zeros(X.shape[0])
    for n, r in enumerate(X):
        a, b, c = np.argsort(r)[3:6]
        out[n] = r[a] * 2 + r[b] - r[c] ** 2
    return vnp.sum(out ** 2)


def three_first(X):
    return sum(a * b - c for a, b, c in (r[:3] for r in X))


def halves(X):
    tot = 0.0
    for r in X:
        u, v = r[:8].reshape(2, -1)
        tot = tot + np.dot(u, v)
    return tot


def points(P):
    return sum(np.hypot(x, y) * x for x, y in P)


def strided_pairs(X):
    tot = 0.0
    for r in X:
        a, b = r[1::4][:2]
        tot = tot + np.exp(a) * b
    return tot


def reversed_pairs(X):
    tot = 0.0
    for r in X:
        a, b = r[::-1][2:4]
        tot = tot + a * np.sin(b)
    return tot


def negated_order(X):
    tot = 0.0
    for r in X:
        k = np.argsort(-r)
        tot = tot + r[k[0]] / (1 + r[k[1]] ** 2)
    return tot


PROGRAMS = {f.__name__: (f, a) for f, a in [
    (top_gap, X), (low_pair, X), (sorted_ends, X), (middle_three, X), (three_first, X),
    (halves, X), (points, P2), (strided_pairs, X), (reversed_pairs, X), (negated_order, X)]}
NO_ARGSORT = ("top_gap", "low_pair", "sorted_ends", "middle_three")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_unpacking_loops_are_numpys(name):
    f, A = PROGRAMS[name]
    v = vg.value_and_grad(f)(A)[0]
    assert_same(np.asarray(v), np.asarray(f(A)), rtol=1e-12)
    vg.check_grads(f, (A,))
    e, leaves = entry(f, (A,))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


@pytest.mark.parametrize("name", NO_ARGSORT)
def test_a_few_unpacked_argsort_positions_read_the_sort(name):
    f, A = PROGRAMS[name]
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f).entry(A)
    prims = {q.prim.name for q in e.stages["final"].eqns}
    assert "argsort" not in prims and "sort" in prims, prims


def _random_slice(rng, n):
    start, stop = rng.integers(-n - 1, n + 2, 2)
    step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
    return slice(int(start), int(stop), step) if rng.random() < 0.8 or not n else \
        int(rng.integers(-n, n))


def test_reads_of_reads_compose_as_numpy():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((9, 8))
    done = 0
    for _ in range(60):
        s1 = tuple(_random_slice(rng, d) for d in x.shape)
        y = x[s1]
        if y.ndim == 0:
            continue
        s2 = tuple(_random_slice(rng, d) for d in y.shape)
        try:
            want = y[s2] * 2.0
        except IndexError:
            continue
        got = vg.jit(lambda x, s1=s1, s2=s2: x[s1][s2] * 2.0)(x)
        assert_same(got, want)
        done += 1
    assert done > 30


@pytest.mark.parametrize("n, k, m, j", [(5, 2, 3, 0), (5, 2, 3, 1), (4, 3, 6, 2), (1, 4, 2, 3)])
def test_flattened_pairs_and_broadcast_rows_read_back(n, k, m, j):
    """reshape(c, (n * k, 1))[j::k] and broadcast_to(x[:, None], (n, k, m)).reshape(n * k,
    m)[j::k]: what batching makes of `i, j = pair` per row, read back as c[:, j], x."""
    c = RNG.standard_normal((n, k))
    x = RNG.standard_normal((n, m))

    def f(c, x):
        flat = vnp.reshape(c, (n * k, 1))[j::k]
        rows = vnp.reshape(vnp.broadcast_to(x[:, None], (n, k, m)), (n * k, m))[j::k]
        back = vnp.reshape(rows, (n, 1, m))[:, 0]
        return vnp.sum(np.tanh(flat * rows + back[::-1]) ** 2)
    assert_same(vg.jit(f)(c, x), f(c, x), rtol=1e-12)
    vg.check_grads(f, (c, x), argnums=(0, 1))
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f, argnums=(0, 1)).entry(c, x)
    assert "broadcast_to" not in {q.prim.name for q in e.stages["final"].eqns}


def test_a_broadcast_read_along_stays_broadcast():
    x = RNG.standard_normal((3, 1, 4))
    f = lambda x: vnp.sum(vnp.broadcast_to(x, (2, 3, 5, 4))[1, :, 1:4, ::-2] * np.arange(2.0))
    assert_same(vg.jit(f)(x), f(x), rtol=1e-12)
    vg.check_grads(f, (x,))

