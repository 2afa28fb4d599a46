"""Item 8, static data at call time: static arguments holding thousands of Python index tuples
(or a dict of lists) are part of every call's cache key; flattening and hashing them must cost
at most 5% of the compiled call."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def pair_similarity(x, y, pairs):
    """Item 8: a static list of 3,000 (i, j) tuples; a Gaussian similarity summed over them."""
    return sum(vnp.exp(-vnp.sum((x[i] - y[j]) ** 2)) for i, j in pairs)


def pair_similarity_ref(x, y, I, J):
    return np.sum(np.exp(-np.sum((x[I] - y[J]) ** 2, axis=1)))


def pair_inputs(rng, n, d, m):
    return (normal(rng, n, d, scale=0.3), normal(rng, n, d, scale=0.3),
            [(int(i), int(j)) for i, j in rng.integers(0, n, (m, 2))])


def _prep_pairs(args):
    x, y, pairs = args
    I, J = np.array(pairs).T
    return x, y, I, J


def triplet_margin(emb, triplets, margin):
    """Item 8: a triplet margin loss over a static list of 3,000 (anchor, positive, negative)
    tuples."""
    loss = 0.0
    for a, p, n in triplets:
        dp = vnp.sum((emb[a] - emb[p]) ** 2)
        dn = vnp.sum((emb[a] - emb[n]) ** 2)
        loss += vnp.maximum(dp - dn + margin, 0.0)
    return loss / len(triplets)


def triplet_margin_ref(emb, A, P, N, margin):
    dp = np.sum((emb[A] - emb[P]) ** 2, axis=1)
    dn = np.sum((emb[A] - emb[N]) ** 2, axis=1)
    return np.mean(np.maximum(dp - dn + margin, 0.0))


def triplet_inputs(rng, n, d, m):
    return (normal(rng, n, d), [tuple(int(k) for k in t) for t in rng.integers(0, n, (m, 3))],
            1.0)


def _prep_triplets(args):
    emb, triplets, margin = args
    A, P, N = np.array(triplets).T
    return emb, A, P, N, margin


def neighbour_means(x, W, neighbours):
    """Item 8: a static dict from node to its list of neighbours (3,000 entries in all); each
    node is compared with the mean of its neighbours through a shared map W."""
    total = 0.0
    for v, nbrs in neighbours.items():
        mean = sum(x[u] for u in nbrs) / len(nbrs)
        total += vnp.sum((x[v] @ W - mean) ** 2)
    return total


def neighbour_means_ref(x, W, nodes, flat, starts, counts):
    means = np.add.reduceat(x[flat], starts, axis=0) / counts[:, None]
    return np.sum((x[nodes] @ W - means) ** 2)


def neighbour_inputs(rng, n, d, m):
    k = m // n
    return (normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5),
            {v: [int(u) for u in rng.integers(0, n, k)] for v in range(n)})


def _prep_neighbours(args):
    x, W, nb = args
    nodes = np.array(list(nb))
    counts = np.array([len(nb[v]) for v in nodes])
    flat = np.concatenate([nb[v] for v in nodes])
    return x, W, nodes, flat, np.r_[0, np.cumsum(counts)[:-1]], counts


PATTERNS = [
    Pattern("pair_similarity", 8, pair_similarity, pair_similarity_ref, pair_inputs,
            {"small": {"n": 5, "d": 3, "m": 8}, "default": {"n": 500, "d": 16, "m": 3000}},
            (0, 1), prepare=_prep_pairs),
    Pattern("triplet_margin", 8, triplet_margin, triplet_margin_ref, triplet_inputs,
            {"small": {"n": 6, "d": 3, "m": 8}, "default": {"n": 500, "d": 16, "m": 3000}},
            (0,), prepare=_prep_triplets),
    Pattern("neighbour_means", 8, neighbour_means, neighbour_means_ref, neighbour_inputs,
            {"small": {"n": 4, "d": 3, "m": 12}, "default": {"n": 300, "d": 16, "m": 3000}},
            (0, 1), prepare=_prep_neighbours),
]
