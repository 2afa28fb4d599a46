"""Item 5, batching across depth: equal operations that sit at different depths of the trace
(work hanging off a recurrence, inputs that took different routes, trees of different shapes)
but do not depend on each other."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def rnn_hidden_energy(W, U, xs):
    """Item 5: an RNN whose penalty total += sum(h**2) hangs off every step of the recurrence."""
    h = vnp.zeros((W.shape[0], xs.shape[2]))
    total = 0.0
    for t in range(len(xs)):
        h = vnp.tanh(W @ h + U @ xs[t])
        total += vnp.sum(h ** 2)
    return total


def rnn_hidden_energy_ref(W, U, xs):
    T, n_in, B = xs.shape
    ux = (U @ xs.transpose(1, 0, 2).reshape(n_in, T * B)).reshape(-1, T, B)
    h = np.zeros((W.shape[0], B))
    hs = np.empty((T,) + h.shape)
    for t in range(T):
        h = hs[t] = np.tanh(W @ h + ux[:, t])
    return np.sum(hs ** 2)


def rnn_inputs(rng, T, n_in, n_h, b):
    return (normal(rng, n_h, n_h, scale=n_h ** -0.5), normal(rng, n_h, n_in, scale=n_in ** -0.5),
            normal(rng, T, n_in, b))


def ode_running_cost(theta, x0, target, dt, steps):
    """Item 5: an explicit Euler integrator; the running cost of each step hangs off the state."""
    x = x0
    cost = 0.0
    for _ in range(steps):
        x = x + dt * (vnp.tanh(theta @ x) - 0.1 * x)
        cost = cost + dt * vnp.sum((x - target) ** 2)
    return cost


def ode_running_cost_ref(theta, x0, target, dt, steps):
    xs = np.empty((steps,) + x0.shape)
    x = x0
    for k in range(steps):
        x = xs[k] = x + dt * (np.tanh(theta @ x) - 0.1 * x)
    return dt * np.sum((xs - target) ** 2)


def ode_inputs(rng, d, b, steps):
    return (normal(rng, d, d, scale=d ** -0.5), normal(rng, d, b), normal(rng, d, b), 0.05,
            steps)


def mixed_depth_layer(x, W, flags):
    """Item 5: one layer applied to every input, some of which were normalised first, so the
    same operation sits at different depths: z = x[i] / |x[i]| if flags[i] else x[i]."""
    total = 0.0
    for i, normalise in enumerate(flags):
        z = x[i]
        if normalise:
            z = z / vnp.linalg.norm(z)
        total += vnp.sum(vnp.tanh(W @ z))
    return total


def mixed_depth_layer_ref(x, W, flags):
    z = np.where(flags[:, None], x / np.linalg.norm(x, axis=1, keepdims=True), x)
    return np.sum(np.tanh(z @ W.T))


def mixed_depth_inputs(rng, n, d, h):
    return (normal(rng, n, d), normal(rng, h, d, scale=d ** -0.5),
            [bool(f) for f in rng.integers(0, 2, n)])


def _prep_flags(args):
    x, W, flags = args
    return x, W, np.asarray(flags)


def random_tree(rng, leaves):
    """A random binary tree over the given leaf ids, as nested (left, right) tuples."""
    if len(leaves) == 1:
        return leaves[0]
    k = int(rng.integers(1, len(leaves)))
    return (random_tree(rng, leaves[:k]), random_tree(rng, leaves[k:]))


def tree_rnn(leaves, W, b, v, trees):
    """Item 5: a recursive network over binary trees of different shapes (DyNet's example):
    node = tanh(W @ concat(left, right) + b); the roots are scored and summed."""
    def encode(node):
        if isinstance(node, int):
            return leaves[node]
        left, right = node
        return vnp.tanh(W @ vnp.concatenate([encode(left), encode(right)]) + b)
    return sum(v @ encode(t) for t in trees)


def tree_rnn_ref(leaves, W, b, v, levels, roots, n_nodes):
    table = np.empty((n_nodes, leaves.shape[1]))
    table[:len(leaves)] = leaves
    for ids, left, right in levels:                 # one batched layer per height
        table[ids] = np.tanh(np.concatenate([table[left], table[right]], axis=1) @ W.T + b)
    return np.sum(table[roots] @ v)


def tree_inputs(rng, n_trees, leaves_per_tree, d):
    n = n_trees * leaves_per_tree
    trees = [random_tree(rng, list(range(k * leaves_per_tree, (k + 1) * leaves_per_tree)))
             for k in range(n_trees)]
    return (normal(rng, n, d), normal(rng, d, 2 * d, scale=(2 * d) ** -0.5),
            normal(rng, d, scale=0.1), normal(rng, d), trees)


def _prep_trees(args):
    """Schedule the internal nodes by height: a hand-vectorizing user's level-by-level plan.
    Node ids continue after the leaves; `levels` holds (ids, left ids, right ids) per height."""
    leaves, W, b, v, trees = args
    by_height: dict[int, list] = {}
    next_id = [len(leaves)]

    def visit(node):
        if isinstance(node, int):
            return node, 0
        (lid, lh), (rid, rh) = visit(node[0]), visit(node[1])
        nid, next_id[0] = next_id[0], next_id[0] + 1
        by_height.setdefault(max(lh, rh) + 1, []).append((nid, lid, rid))
        return nid, max(lh, rh) + 1
    roots = np.array([visit(t)[0] for t in trees])
    levels = [tuple(np.array(c) for c in zip(*by_height[h])) for h in sorted(by_height)]
    return leaves, W, b, v, levels, roots, next_id[0]


PATTERNS = [
    Pattern("rnn_hidden_energy", 5, rnn_hidden_energy, rnn_hidden_energy_ref, rnn_inputs,
            {"small": {"T": 5, "n_in": 3, "n_h": 4, "b": 2},
             "default": {"T": 100, "n_in": 32, "n_h": 64, "b": 32}}, (0, 1, 2),
            target="rolled"),
    Pattern("ode_running_cost", 5, ode_running_cost, ode_running_cost_ref, ode_inputs,
            {"small": {"d": 3, "b": 2, "steps": 5}, "default": {"d": 32, "b": 64, "steps": 100}},
            (0, 1, 2), target="rolled"),
    Pattern("mixed_depth_layer", 5, mixed_depth_layer, mixed_depth_layer_ref,
            mixed_depth_inputs, {"small": {"n": 8, "d": 3, "h": 4},
                                 "default": {"n": 2000, "d": 32, "h": 32}}, (0, 1),
            prepare=_prep_flags),
    Pattern("tree_rnn", 5, tree_rnn, tree_rnn_ref, tree_inputs,
            {"small": {"n_trees": 3, "leaves_per_tree": 4, "d": 3},
             "default": {"n_trees": 64, "leaves_per_tree": 16, "d": 32}}, (0, 1, 2, 3),
            prepare=_prep_trees),
]
