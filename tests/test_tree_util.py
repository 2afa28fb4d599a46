"""vg.tree_util against JAX's conventions (containers, sorted dict keys, namedtuples, None,
everything else a leaf), and vg.stop_gradient over a pytree."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import vecgrad as vg
from vecgrad import tree_util as tu

P = collections.namedtuple("P", "w b")
TREES = [
    {"b": [1.0, np.ones(2)], "a": (None, P(np.zeros(3), 2)), "c": "s"},
    [np.arange(3), (4.0,), {"z": None, "y": [[]]}],
    (),
    None,
    np.ones(2),
    3,
    P(w=[1, 2], b={"k": (5,)}),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_then_unflatten_is_the_tree(tree):
    leaves, td = tu.tree_flatten(tree)
    assert td.num_leaves == len(leaves) == len(tu.tree_leaves(tree))
    back = tu.tree_unflatten(td, leaves)
    assert tu.tree_structure(back) == td
    assert all(a is b for a, b in zip(tu.tree_leaves(back), leaves))
    assert repr(td)  # (every structure prints)


def test_dict_keys_sort_and_leaves_follow_them():
    leaves, td = tu.tree_flatten({"b": 2, "a": 1, "c": {"y": 4, "x": 3}})
    assert leaves == [1, 2, 3, 4]
    assert repr(td) == "{'a': *, 'b': *, 'c': {'x': *, 'y': *}}"


def test_map_over_several_trees_and_below_the_first_ones_leaves():
    grads = {"W": np.ones((2, 2)), "b": [np.ones(2), 0.5]}
    params = {"W": np.zeros((2, 2)), "b": [np.zeros(2), 1.0]}
    new = tu.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(new["W"], -0.1)
    assert new["b"][1] == pytest.approx(0.95)
    pairs = tu.tree_map(lambda a, b: (a, b), {"x": 1, "y": [2, 3]}, {"x": "p", "y": [[4], 5]})
    assert pairs == {"x": (1, "p"), "y": [(2, [4]), (3, 5)]}


def test_is_leaf_stops_the_descent():
    tree = {"a": [1, 2], "b": [3]}
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list)) == [[1, 2], [3]]
    assert tu.tree_map(len, tree, is_leaf=lambda x: isinstance(x, list)) == {"a": 2, "b": 1}


@pytest.mark.parametrize("a, b", [({"x": 1}, {"y": 1}), ([1, 2], [1]), ((1,), [1]),
                                  (None, 1), (P(1, 2), (1, 2))])
def test_structures_that_differ_raise_a_typed_error(a, b):
    with pytest.raises(vg.ArgumentError, match="structures differ"):
        tu.tree_map(lambda u, v: u, a, b)


def test_unflatten_with_the_wrong_number_of_leaves_raises():
    td = tu.tree_structure([1, (2, 3)])
    with pytest.raises(vg.ArgumentError, match="holds 3 leaves, 2 were given"):
        tu.tree_unflatten(td, [1, 2])


def test_stop_gradient_zeroes_the_gradient_through_every_leaf():
    x = np.array([1.0, 2.0, 3.0])
    # d/dx sum(sg(x) * x) = sg(x) = x
    np.testing.assert_allclose(vg.grad(lambda a: np.sum(vg.stop_gradient(a) * a))(x), x)
    g = vg.grad(lambda p: np.sum(vg.stop_gradient(p)["w"] * p["w"] ** 2))({"w": x})
    np.testing.assert_allclose(g["w"], 2 * x * x)
    out = vg.stop_gradient({"a": x, "b": [x]})
    np.testing.assert_array_equal(out["b"][0], x)
