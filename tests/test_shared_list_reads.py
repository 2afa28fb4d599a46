"""Reads of one index list that iterations share (batch/sharedreads.py): tracing merges
`X[nbrs[i]]` and `X[nbrs[j]]` when the two lists are equal, and list maps then took the two
iterations for one member. Before the split this gave a silent wrong answer (a member's
rows `X[i]` taken from the last iteration that read it: gnn_dist off by 2e-4) or, once
caught, ran every node one by one (15x). Each iteration's uses now get their own read, uses
that depend on each other (an attention row) stay one member's, and the batched graph holds
one gather. Batched equals unbatched (values and VJPs), gradients match central
differences."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count, entry

import vecgrad as vg
from vecgrad import primitives as P
from vecgrad.batch.sharedreads import shared_list_reads

R = np.random.default_rng(31)


def lists_with_repeats(n, seed):
    """Neighbour lists of lengths 1-5 where some lists repeat (equal lists of equal
    lengths, as a random graph's nodes of degree one often have)."""
    rng = np.random.default_rng(seed)
    out = [rng.choice(n, int(rng.integers(1, 6)), replace=False) for _ in range(n)]
    for i in rng.choice(n, n // 4, replace=False):
        out[i] = out[int(rng.integers(0, n))].copy()
    return out


NB = lists_with_repeats(24, 1)
WTS = [R.random(len(nb)) for nb in NB]


def distances(X):
    tot = 0.0
    for i, nb in enumerate(NB):
        tot = tot + np.sum(WTS[i] * np.sum((X[nb] - X[i]) ** 2, axis=1))
    return tot


def weighted_sums(X):
    H = np.zeros_like(X)
    for i, nb in enumerate(NB):
        H[i] = WTS[i] @ X[nb]
    return np.sum(np.tanh(H) ** 2)


def attention(X, a):
    out = []
    for i, nb in enumerate(NB):
        s = X[nb] @ a
        p = np.exp(s - np.max(s))
        out.append((p / np.sum(p)) @ X[nb])
    return np.sum(np.stack(out) ** 2)


def loop_values(f, *args):
    return f(*args)


@pytest.mark.parametrize("f", [distances, weighted_sums])
def test_iterations_that_share_a_list_read_batch_and_stay_right(f):
    X = R.standard_normal((24, 3))
    assert abs(vg.jit(f)(X) - loop_values(f, X)) <= 1e-12 * abs(loop_values(f, X))
    e = check_batched(f, (X,))
    g = e.stages["batch"]
    assert count(g, P.segment_sum) >= 1 and count(g, P.sub) + count(g, P.mul) <= 4, g


def test_uses_that_depend_on_each_other_stay_one_member():
    X, a = R.standard_normal((24, 3)), R.standard_normal(3)
    want = attention(X, a)
    assert abs(vg.jit(attention)(X, a) - want) <= 1e-12 * abs(want)
    e = check_batched(attention, (X, a), argnums=(0, 1))
    assert count(e.stages["batch"], P.exp) == 1, e.stages["batch"]


def test_the_split_copies_reads_of_independent_uses_only():
    """Traced, the graph reads X once per distinct list; split, once per iteration."""
    X = R.standard_normal((24, 3))
    e, _ = entry(distances, (X,), 0)
    g = e.stages["cse"]

    def list_reads(g):
        return [q for q in g.eqns if q.prim is P.getitem and
                q.params["idx"].__class__ is not P.BasicIndex]
    distinct = len({tuple(nb) for nb in NB})
    assert len(list_reads(g)) == distinct < len(NB) == len(list_reads(shared_list_reads(g)))
    a = R.standard_normal(3)
    e, _ = entry(attention, (X, a), (0, 1))
    g = e.stages["cse"]
    # (equal lists there make equal work, all of it merged when traced: nothing to split,
    # and the two uses of each read, `X[nb] @ a` and `p @ X[nb]`, stay one read)
    assert len(list_reads(shared_list_reads(g))) == distinct


TEMP = R.uniform(0.5, 2.0, len(NB))  # (a NumPy number per node: constants when traced)


def tempered_attention(X, a):
    out = []
    for i, nb in enumerate(NB):
        s = (X[nb] @ a) * TEMP[i]  # (equal lists share `X[nb] @ a`, not what follows)
        p = np.exp(s - np.max(s))
        out.append((p / np.sum(p)) @ X[nb] + X[i])
    return np.sum(np.stack(out) ** 2)


def test_dependent_uses_of_a_shared_read_in_several_iterations():
    """`p_i @ X[nb]` in two iterations that share `X[nb]` and `X[nb] @ a`: both descend from
    the shared product, so they stay on the one read; values stay each iteration's."""
    X, a = R.standard_normal((24, 3)), R.standard_normal(3)
    want = tempered_attention(X, a)
    assert abs(vg.jit(tempered_attention)(X, a) - want) <= 1e-12 * abs(want)
    check_batched(tempered_attention, (X, a), argnums=(0, 1))
