"""Row-wise work on rows picked by static index lists of different lengths (batch/listmaps.py):
`x[nb] @ W`, `tanh(x[nb] + b)`, pieces appended then concatenated, a sum over each list after
row-wise steps. Each read is a tile of one gather at the concatenated lists, and alike row-wise
operations of tiles run once on the whole. Batched equals unbatched (values and VJPs), the
gradients match central differences, and the batched graph holds one gather and one product,
not one per list; operations that are not row-wise along the list's axis stay per list."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count
from test_list_sums import ragged_lists

import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(5)


def concat_pieces(x, W, b, nbrs):
    pieces = []
    for nb in nbrs:
        h = x[nb] @ W
        pieces.append(np.tanh(h * h + b))
    return np.sum(np.log1p(np.concatenate(pieces) ** 2))


def per_list_sums(x, W, nbrs):
    return sum(np.sum(np.tanh(x[nb] @ W), axis=0) @ W[0] for nb in nbrs)


def columns_then_rows(A, v, cols):
    # lists along a later axis; the row-wise step broadcasts v along the other axis
    return sum(np.sum(np.sin(A[:, c] * v[:, None]) ** 2) for c in cols)


def not_rowwise(x, nbrs):
    # x[nb] - x[nb].mean(0): the mean varies per list, a product with a per-list matrix
    return sum(np.sum((x[nb] - np.mean(x[nb], axis=0)) ** 2 * len(nb)) for nb in nbrs)


def test_pieces_concatenated_are_one_gather_and_one_product():
    x, W, b = R.standard_normal((9, 3)), R.standard_normal((3, 4)), R.standard_normal(4)
    nbrs = ragged_lists(9, 7, 5)
    e = check_batched(concat_pieces, (x, W, b, nbrs), argnums=(0, 1, 2))
    g = e.stages["batch"]
    assert count(g, P.einsum) == 1 and count(g, P.tanh) == 1, g


def test_sums_over_each_list_after_rowwise_steps():
    x, W = R.standard_normal((8, 3)), R.standard_normal((3, 3))
    nbrs = ragged_lists(8, 6, 4)
    e = check_batched(per_list_sums, (x, W, nbrs), argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.tanh) == 1 and count(g, P.segment_sum) == 1, g


@pytest.mark.parametrize("f,args", [
    (columns_then_rows, (R.standard_normal((3, 8)), R.standard_normal(3),
                         ragged_lists(8, 5, 4))),
    (not_rowwise, (R.standard_normal((7, 2)), ragged_lists(7, 5, 4)))])
def test_other_shapes_stay_exact(f, args):
    check_batched(f, args, argnums=0)


def test_lists_of_one_length_are_left_to_the_batch_pass():
    x, W, b = R.standard_normal((9, 3)), R.standard_normal((3, 4)), R.standard_normal(4)
    nbrs = [[1, 2, 3], [0, 0, 8], [4, 5, 6], [-1, 2, 2]]
    from vecgrad.api import trace_graph
    from vecgrad.batch.listmaps import list_maps
    g = trace_graph(lambda x, W, b: concat_pieces(x, W, b, nbrs), (x, W, b))
    assert list_maps(g) is g
    check_batched(concat_pieces, (x, W, b, nbrs), argnums=(0, 1, 2))


def neighbour_softmax(x, a, nbrs):
    out = vnp.zeros_like(x)
    for v, nb in enumerate(nbrs):
        s = x[nb] @ a
        p = np.exp(s - np.max(s))
        p = p / np.sum(p)
        out[v] = p @ x[nb]
    return np.sum(out ** 2)


def per_list_extremes(x, nbrs):
    # max and min over each list (columns kept, then all), a dot of two tiles, rows mixed
    return sum(np.sum(np.max(x[nb], axis=0) * np.min(x[nb])) + x[nb][:, 0] @ x[nb][:, 1]
               for nb in nbrs)


def test_softmax_over_neighbour_lists_is_one_segment_max_and_sums():
    x, a = R.standard_normal((9, 3)), R.standard_normal(3)
    nbrs = ragged_lists(9, 9, 5)
    e = check_batched(neighbour_softmax, (x, a, nbrs), argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.exp) == 1 and count(g, P.scatter_reduce_along) == 1, g


def test_extremes_and_dots_over_each_list():
    x = R.standard_normal((8, 3))
    x[2, 1] = x[5, 1]  # (a tie inside some list: the cotangent is shared, as np.max's)
    nbrs = ragged_lists(8, 6, 4)
    check_batched(per_list_extremes, (x, nbrs), argnums=0)


def gat_own_scores(x, W, a, nbrs):
    # a node's own score h[i] @ a2 next to its neighbours' (rows of one product)
    h = x @ W
    f = W.shape[1]
    out = vnp.zeros_like(h)
    for i, nb in enumerate(nbrs):
        if not nb:
            continue
        s = np.tanh(h[nb] @ a[:f] + h[i] @ a[f:])
        p = np.exp(s - np.max(s))
        out[i] = (p / np.sum(p)) @ h[nb]
    return np.sum(out ** 2)


def test_attention_with_the_nodes_own_score_is_one_softmax():
    x, W, a = R.standard_normal((9, 3)), R.standard_normal((3, 3)), R.standard_normal(6)
    nbrs = ragged_lists(9, 9, 5)
    e = check_batched(gat_own_scores, (x, W, a, nbrs), argnums=(0, 1, 2))
    g = e.stages["batch"]
    assert count(g, P.exp) == 1 and count(g, P.tanh) == 1, g


def test_own_scores_of_some_nodes_only_stay_exact():
    # a node without neighbours: its own score is not read, the others' still are
    x, W, a = R.standard_normal((9, 3)), R.standard_normal((3, 3)), R.standard_normal(6)
    nbrs = ragged_lists(9, 9, 5)
    nbrs[4] = []
    check_batched(gat_own_scores, (x, W, a, nbrs), argnums=(0, 1, 2))


SCREENED = [
    (concat_pieces, lambda: (R.standard_normal((9, 3)), R.standard_normal((3, 4)),
                             R.standard_normal(4), ragged_lists(9, 7, 5))),
    (neighbour_softmax, lambda: (R.standard_normal((9, 3)), R.standard_normal(3),
                                 ragged_lists(9, 9, 5))),
    (gat_own_scores, lambda: (R.standard_normal((9, 3)), R.standard_normal((3, 3)),
                              R.standard_normal(6), ragged_lists(9, 9, 5))),
    (per_list_extremes, lambda: (R.standard_normal((8, 3)), ragged_lists(8, 6, 4))),
]


@pytest.mark.parametrize("f,make", SCREENED, ids=[f.__name__ for f, _ in SCREENED])
def test_rounds_pass_over_only_what_classify_finds_nothing_in(f, make, monkeypatch):
    """Each round tells in C the equations that read no member's value (most of a graph, in
    every round) and passes over them: asked of every equation of every round, `_classify`
    finds nothing in those, so the rounds group what they grouped when it was asked of all."""
    from vecgrad.api import trace_graph
    from vecgrad.batch import listmaps as LM
    args = make()
    rounds = []
    real = LM._round

    def round_checked(g, vals):
        defs = {e.out: e for e in g.eqns}
        skipped = [e for e in g.eqns if vals.keys().isdisjoint(e.inputs)]
        assert all(LM._classify(e, vals, defs) is None for e in skipped)
        rounds.append((len(skipped), len(g.eqns)))
        return real(g, vals)
    monkeypatch.setattr(LM, "_round", round_checked)
    g = trace_graph(f, args)
    assert LM.list_maps(g) is not g  # (teeth: rounds grouped something, each skipped some)
    assert len(rounds) >= 2 and all(0 < s < n for s, n in rounds), rounds
