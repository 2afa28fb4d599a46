"""Item 3, repeated and irregular indices: edge lists with repeated destinations (message
passing, scatter-add, histograms), reads by Python-int index lists (embedding lookups, bags of
words), permutations. The index data is static Python data, as users keep it."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments


def random_edges(rng, n_nodes, n_edges):
    """A list of (source, destination) Python-int pairs; destinations repeat."""
    return [(int(s), int(d)) for s, d in rng.integers(0, n_nodes, (n_edges, 2))]


def message_passing(x, W, edges):
    """Item 3: messages along an edge list, agg[d] += tanh(x[s] @ W) for s, d in edges."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for s, d in edges:
        agg[d] += vnp.tanh(x[s] @ W)
    return vnp.sum(agg ** 2)


def message_passing_ref(x, W, src, dst):
    return np.sum(segment_sum(np.tanh(x @ W)[src], dst) ** 2)


def message_passing_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), random_edges(rng, n, e)


def _prep_edges(args):
    *arrays, edges = args
    src, dst = np.array(edges).T
    return (*arrays, src, segments(dst, len(arrays[0])))


def weighted_scatter(x, w, edges):
    """Item 3: a scatter-add of weighted rows, out[j] += w_e * x[i] for (i, j), w_e in
    zip(edges, w)."""
    out = vnp.zeros_like(x)
    for (i, j), we in zip(edges, w):
        out[j] += we * x[i]
    return vnp.sum(vnp.tanh(out))


def weighted_scatter_ref(x, w, src, dst):
    return np.sum(np.tanh(segment_sum(w[:, None] * x[src], dst)))


def weighted_scatter_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, e), random_edges(rng, n, e)


def soft_histogram(values, bins, n_bins):
    """Item 3: a per-channel histogram-like count into bins known in advance,
    hist[b] += exp(v), then the entropy of each channel's normalised histogram."""
    hist = vnp.full((n_bins, values.shape[1]), 1e-3)
    for v, b in zip(values, bins):
        hist[b] += vnp.exp(v)
    p = hist / vnp.sum(hist, axis=0)
    return -vnp.sum(p * vnp.log(p))


def soft_histogram_ref(values, bins, n_bins):
    hist = segment_sum(np.exp(values), bins) + 1e-3
    p = hist / hist.sum(0)
    return -np.sum(p * np.log(p))


def soft_histogram_inputs(rng, n, c, n_bins):
    return normal(rng, n, c), [int(b) for b in rng.integers(0, n_bins, n)], n_bins


def _prep_bins(args):
    values, bins, n_bins = args
    return values, segments(bins, n_bins), n_bins


def embedding_classifier(E, Wout, tokens, labels):
    """Item 3: embedding lookups E[t] for t in a Python list of token ids, stacked; the
    cross-entropy summed as -sum(logp[i, y] for i, y in enumerate(labels))."""
    H = vnp.stack([E[t] for t in tokens])
    logp = vg.nn.log_softmax(H @ Wout, axis=1)
    return -sum(logp[i, y] for i, y in enumerate(labels)) / len(labels)


def embedding_classifier_ref(E, Wout, tokens, labels):
    z = E[tokens] @ Wout
    m = z.max(1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(1)) + m[:, 0]
    return np.mean(lse - z[np.arange(len(labels)), labels])


def embedding_inputs(rng, vocab, d, k, n):
    return (normal(rng, vocab, d), normal(rng, d, k, scale=d ** -0.5),
            [int(t) for t in rng.integers(0, vocab, n)],
            [int(t) for t in rng.integers(0, k, n)])


def _prep_tokens(args):
    E, W, tokens, labels = args
    return E, W, np.asarray(tokens), np.asarray(labels)


def bag_of_words(E, w, sentences):
    """Item 3: mean-pooled embeddings of variable-length sentences, a logistic loss on each:
    sum(E[t] for t in s) / len(s) in a comprehension."""
    scores = [w @ (sum(E[t] for t in s) / len(s)) for s in sentences]
    return vnp.sum(vg.nn.softplus(-vnp.stack(scores)))


def bag_of_words_ref(E, w, flat, starts, lengths):
    bags = np.add.reduceat(E[flat], starts, axis=0) / lengths[:, None]
    return np.sum(np.logaddexp(0.0, -(bags @ w)))


def bag_inputs(rng, vocab, d, n, max_len):
    lengths = rng.integers(1, max_len + 1, n)
    return (normal(rng, vocab, d), normal(rng, d),
            [[int(t) for t in rng.integers(0, vocab, m)] for m in lengths])


def _prep_bags(args):
    E, w, sentences = args
    lengths = np.array([len(s) for s in sentences])
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    return E, w, np.concatenate([np.asarray(s) for s in sentences]), starts, lengths


def permutation_gather(x, perm):
    """Item 3: rows gathered through a permutation given as a Python list, y[i] = x[perm[i]],
    compared with the rows in place."""
    y = vnp.stack([x[p] for p in perm])
    return vnp.sum(vnp.tanh(y) * x)


def permutation_gather_ref(x, perm):
    return np.sum(np.tanh(x[perm]) * x)


def permutation_inputs(rng, n, d):
    return normal(rng, n, d), [int(p) for p in rng.permutation(n)]


def _prep_perm(args):
    return args[0], np.asarray(args[1])


def dirichlet_energy(x, src, dst):
    """Item 3: a graph smoothness energy over an edge list given as two Python lists,
    sum(sum((x[s] - x[d])**2) for s, d in zip(src, dst))."""
    return sum(vnp.sum((x[s] - x[d]) ** 2) for s, d in zip(src, dst))


def dirichlet_energy_ref(x, src, dst):
    return np.sum((x[src] - x[dst]) ** 2)


def dirichlet_inputs(rng, n, e, d):
    src, dst = zip(*random_edges(rng, n, e))
    return normal(rng, n, d), list(src), list(dst)


def _prep_two_lists(args):
    x, src, dst = args
    return x, np.asarray(src), np.asarray(dst)


PATTERNS = [
    Pattern("message_passing", 3, message_passing, message_passing_ref,
            message_passing_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1), prepare=_prep_edges),
    Pattern("weighted_scatter", 3, weighted_scatter, weighted_scatter_ref,
            weighted_scatter_inputs,
            {"small": {"n": 5, "e": 12, "f": 2}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1), prepare=_prep_edges),
    Pattern("soft_histogram", 3, soft_histogram, soft_histogram_ref, soft_histogram_inputs,
            {"small": {"n": 12, "c": 2, "n_bins": 4},
             "default": {"n": 3000, "c": 16, "n_bins": 64}}, (0,), prepare=_prep_bins),
    Pattern("embedding_classifier", 3, embedding_classifier, embedding_classifier_ref,
            embedding_inputs, {"small": {"vocab": 7, "d": 3, "k": 4, "n": 9},
                               "default": {"vocab": 1000, "d": 32, "k": 10, "n": 2000}},
            (0, 1), prepare=_prep_tokens),
    Pattern("bag_of_words", 3, bag_of_words, bag_of_words_ref, bag_inputs,
            {"small": {"vocab": 7, "d": 3, "n": 4, "max_len": 4},
             "default": {"vocab": 1000, "d": 32, "n": 300, "max_len": 20}}, (0, 1),
            prepare=_prep_bags),
    Pattern("permutation_gather", 3, permutation_gather, permutation_gather_ref,
            permutation_inputs, {"small": {"n": 6, "d": 3}, "default": {"n": 2000, "d": 32}},
            (0,), prepare=_prep_perm),
    Pattern("dirichlet_energy", 3, dirichlet_energy, dirichlet_energy_ref, dirichlet_inputs,
            {"small": {"n": 5, "e": 9, "d": 2}, "default": {"n": 1000, "e": 4000, "d": 16}},
            (0,), prepare=_prep_two_lists),
]
