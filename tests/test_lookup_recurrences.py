"""Recurrences that read a table at positions from a Python list (token embeddings `E[t]`
for t in a token list, an HMM's emission column `logB[:, o]` for o in the observations): a
position that repeats is one traced read shared by several steps, which is still per-step
data, not an invariant. Such loops roll (one loop, not one copy per step), and rolled equals
unrolled (values and gradients) equals NumPy running the loop and central differences."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import prims, unrolled

import vecgrad as vg
from vecgrad.pytree import flatten


def char_rnn(E, W, toks):
    h = np.zeros(W.shape[0])
    loss = 0.0
    for t in toks:
        h = np.tanh(W @ h + E[t])
        loss = loss + np.sum(h ** 2)
    return loss


def hmm_forward(logA, logB, obs):
    alpha = logB[:, obs[0]] - np.log(logA.shape[0])
    for o in obs[1:]:
        m = np.max(alpha)
        alpha = np.log(np.exp(alpha - m) @ np.exp(logA)) + m + logB[:, o]
    m = np.max(alpha)
    return m + np.log(np.sum(np.exp(alpha - m)))


def scalar_table(table, w, ks):
    h = 0.0
    out = []
    for k in ks:
        h = np.tanh(w * h + table[k])
        out.append(h)
    return np.sum(np.stack(out) * np.arange(1.0, len(ks) + 1))


def two_tables(E, F, W, pairs):
    h = np.zeros(W.shape[0])
    for a, b in pairs:  # two lookups per step, from two tables of one shape
        h = np.sin(W @ h + E[a] - 0.5 * F[b])
    return np.sum(h)


def _case(name, n, seed):
    r = np.random.default_rng(seed)
    if name == "char_rnn":
        return char_rnn, (r.standard_normal((5, 4)), 0.4 * r.standard_normal((4, 4)),
                          r.integers(0, 5, n).tolist())
    if name == "hmm_forward":
        return hmm_forward, (np.log(r.dirichlet(np.ones(3), 3)), np.log(r.dirichlet(np.ones(4), 3)),
                             r.integers(0, 4, n).tolist())
    if name == "scalar_table":
        return scalar_table, (r.standard_normal(3), 0.7, r.integers(0, 3, n).tolist())
    return two_tables, (r.standard_normal((3, 4)), r.standard_normal((3, 4)),
                        0.4 * r.standard_normal((4, 4)),
                        list(zip(r.integers(0, 3, n).tolist(), r.integers(0, 3, n).tolist())))


NAMES = ["char_rnn", "hmm_forward", "scalar_table", "two_tables"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_lookups_in_a_recurrence_roll_and_match(name, seed):
    f, args = _case(name, 30, seed)
    nums = tuple(i for i, a in enumerate(args) if isinstance(a, (np.ndarray, float)))
    val0, grads0 = unrolled(f, args, nums)
    val, grads = vg.value_and_grad(f, argnums=nums)(*args)
    np.testing.assert_allclose(val, f(*args), rtol=1e-12)
    np.testing.assert_allclose(val, val0, rtol=1e-12)
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    vg.check_grads(f, args, argnums=nums, rtol=1e-6, atol=1e-8, n_dirs=2)
    e, _ = vg.grad(f, argnums=nums).entry(*args)
    assert "loop" in prims(e.stages["final"])


@pytest.mark.parametrize("name", NAMES)
def test_the_rolled_graph_does_not_grow_with_the_sequence(name):
    def size(n):
        f, args = _case(name, n, 3)
        nums = tuple(i for i, a in enumerate(args) if isinstance(a, (np.ndarray, float)))
        e, _ = vg.grad(f, argnums=nums).entry(*args)
        return len(e.stages["final"].eqns)
    # (a first or last step that differs may stay apart; the rest is one loop)
    assert size(160) <= size(40) + 4


def scalar_gain_particles(x0, k):
    # a vector carry through a scalar nonlinearity of itself (its first entry): the first
    # iteration reads the input, so only some of its members look like the loop's
    x, v = x0, x0 / 2
    tot = 0.0
    for _ in range(24):
        a = -k * x * np.tanh(x[0])
        x = x + 0.1 * v
        v = v + 0.1 * a
        tot = tot + np.sum(v ** 2)
    return tot


def norm_gain(x0, w):
    x = x0
    for _ in range(24):
        x = x + 0.1 * w * x / (1.0 + np.sum(x * x))
    return np.sum(x ** 3)


@pytest.mark.parametrize("f", [scalar_gain_particles, norm_gain], ids=["x_tanh_x0", "norm_gain"])
def test_a_vector_carry_through_a_scalar_of_itself_rolls(f):
    r = np.random.default_rng(4)
    args = (r.standard_normal(5), 0.8)
    val0, grads0 = unrolled(f, args, (0, 1))
    val, grads = vg.value_and_grad(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(val, f(*args), rtol=1e-12)
    np.testing.assert_allclose(val, val0, rtol=1e-12)
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    vg.check_grads(f, args, argnums=(0, 1), rtol=1e-6, atol=1e-8, n_dirs=2)
    e, _ = vg.grad(f, argnums=(0, 1)).entry(*args)
    assert "loop" in prims(e.stages["final"])
