"""Natural variants of the edge-list, read-modify-write and per-sample patterns (items 1, 3, 4
and 7): edges as a list of tuples, as two int arrays or as an (E, 2) array, weighted edges,
messages both ways, degree normalisation, read-modify-write at repeated indices, rows written
then read back, comprehensions with `np.stack`, `map` with a kernel function argument."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges


def _prep_pairs(args):
    *arrays, edges = args
    src, dst = np.asarray(edges).reshape(-1, 2).T
    return (*arrays, src, dst)


def edges_int_arrays(x, W, src, dst):
    """Item 3 (variant): messages along edges given as two int arrays, agg[dst[e]] +=
    tanh(x[src[e]] @ W) for e in range(len(src))."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for e in range(len(src)):
        agg[dst[e]] += vnp.tanh(x[src[e]] @ W)
    return vnp.sum(agg ** 2)


def edges_int_arrays_ref(x, W, src, plan):
    return np.sum(segment_sum(np.tanh(x[src] @ W), plan) ** 2)


def _prep_int_arrays(args):
    x, W, src, dst = args
    return x, W, src, segments(dst, len(x))


def edges_int_arrays_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), s, d


def edge_arrays_zip_rmw(x, W, w, src, dst):
    """Item 3 (variant): weighted messages over two int arrays zipped, written without `+=`:
    agg[d] = agg[d] + w[e] * (x[s] @ W) for e, (s, d) in enumerate(zip(src, dst))."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for e, (s, d) in enumerate(zip(src, dst)):
        agg[d] = agg[d] + w[e] * (x[s] @ W)
    return vnp.sum(vnp.tanh(agg))


def edge_arrays_zip_rmw_ref(x, W, w, src, plan):
    return np.sum(np.tanh(segment_sum(w[:, None] * (x @ W)[src], plan)))


def edge_arrays_zip_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), normal(rng, e), s, d


def _prep_zip_rmw(args):
    x, W, w, src, dst = args
    return x, W, w, src, segments(dst, len(x))


def edges_e2_array(x, edges):
    """Item 3 (variant): an (E, 2) int array of edges iterated row by row, `for s, d in edges`,
    a spring energy sum(|x_s - x_d|^2) per edge into a scalar."""
    e = 0.0
    for s, d in edges:
        e = e + vnp.sum((x[s] - x[d]) ** 2)
    return e


def edges_e2_array_ref(x, edges):
    return np.sum((x[edges[:, 0]] - x[edges[:, 1]]) ** 2)


def edges_e2_inputs(rng, n, e, d):
    return normal(rng, n, d), rng.integers(0, n, (e, 2))


def weighted_edge_tuples(x, W, edges):
    """Item 3 (variant): weighted edges as (source, destination, weight) tuples with Python
    float weights, agg[d] = agg[d] + w * (x[s] @ W), written without `+=`."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for s, d, w in edges:
        agg[d] = agg[d] + w * (x[s] @ W)
    return vnp.sum(vnp.tanh(agg))


def weighted_edge_tuples_ref(x, W, src, plan, w):
    return np.sum(np.tanh(segment_sum(w[:, None] * (x @ W)[src], plan)))


def weighted_tuples_inputs(rng, n, e, f):
    edges = [(s, d, float(w)) for (s, d), w in zip(random_edges(rng, n, e), rng.random(e))]
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), edges


def _prep_weighted(args):
    x, W, edges = args
    s, d, w = zip(*edges)
    return x, W, np.asarray(s), segments(d, len(x)), np.asarray(w)


def undirected_messages(x, W, edges):
    """Item 3 (variant): messages both ways along each undirected edge, m[d] += x[s] @ W and
    m[s] += x[d] @ W in the same iteration."""
    m = vnp.zeros((x.shape[0], W.shape[1]))
    for s, d in edges:
        m[d] += x[s] @ W
        m[s] += x[d] @ W
    return vnp.sum(vnp.tanh(m) ** 2)


def undirected_messages_ref(x, W, src, dst, to_dst, to_src):
    h = x @ W
    return np.sum(np.tanh(segment_sum(h[src], to_dst) + segment_sum(h[dst], to_src)) ** 2)


def _prep_both_ways(args):
    x, W, edges = args
    src, dst = np.asarray(edges).T
    return x, W, src, dst, segments(dst, len(x)), segments(src, len(x))


def undirected_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), random_edges(rng, n, e)


def degree_normalized_gcn(x, W, edges):
    """Items 3, 4 (variant): a GCN propagation with symmetric degree normalisation; degrees
    counted in Python from the edge list, out[d] += x[s] @ W / sqrt(deg[s] * deg[d])."""
    n = x.shape[0]
    deg = [1] * n
    for s, d in edges:
        deg[d] += 1
        deg[s] += 1
    out = vnp.zeros((n, W.shape[1]))
    for s, d in edges:
        out[d] += (x[s] @ W) / np.sqrt(deg[s] * deg[d])
    return vnp.sum(vg.nn.relu(out))


def degree_normalized_gcn_ref(x, W, src, plan, coef):
    return np.sum(np.maximum(segment_sum(coef[:, None] * (x @ W)[src], plan), 0.0))


def _prep_gcn(args):
    x, W, edges = args
    src, dst = np.asarray(edges).T
    n = len(x)
    deg = 1 + np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    return x, W, src, segments(dst, n), 1.0 / np.sqrt(deg[src] * deg[dst])


def weighted_dirichlet(x, w, edges):
    """Item 3 (variant): a graph energy weighted by a learned per-edge weight, summed with a
    generator over enumerate(edges): sum(w[e] * sum((x[i] - x[j])**2) ...)."""
    return sum(w[e] * vnp.sum((x[i] - x[j]) ** 2) for e, (i, j) in enumerate(edges))


def weighted_dirichlet_ref(x, w, src, dst):
    return np.sum(w * np.sum((x[src] - x[dst]) ** 2, axis=1))


def weighted_dirichlet_inputs(rng, n, e, d):
    return normal(rng, n, d), normal(rng, e), random_edges(rng, n, e)


def spring_network(x, rest, edges):
    """Item 3 (variant): a spring network, (|x_i - x_j| - L_e)^2 for each edge with its rest
    length, the edge lengths written into a buffer first, then the energy."""
    lengths = vnp.zeros(len(edges))
    for e, (i, j) in enumerate(edges):
        lengths[e] = vnp.sqrt(vnp.sum((x[i] - x[j]) ** 2))
    return vnp.sum((lengths - rest) ** 2)


def spring_network_ref(x, rest, src, dst):
    return np.sum((np.sqrt(np.sum((x[src] - x[dst]) ** 2, axis=1)) - rest) ** 2)


def spring_inputs(rng, n, e):
    edges = [(i, j) for i, j in random_edges(rng, n, e) if i != j]
    return normal(rng, n, 3), np.abs(normal(rng, len(edges))) + 0.5, edges


def rmw_repeated(v, idx, n):
    """Items 1, 3 (variant): read-modify-write at repeated Python-int positions without `+=`,
    buf[i] = buf[i] + v[k] * v[k] for k, i in enumerate(idx), then a log-sum."""
    buf = vnp.ones((n, v.shape[1]))
    for k, i in enumerate(idx):
        buf[i] = buf[i] + v[k] * v[k]
    return vnp.sum(vnp.log(buf))


def rmw_repeated_ref(v, idx, n):
    return np.sum(np.log(1.0 + segment_sum(v * v, idx)))


def rmw_inputs(rng, e, n, d):
    return normal(rng, e, d), [int(i) for i in rng.integers(0, n, e)], n


def _prep_rmw(args):
    v, idx, n = args
    return v, segments(idx, n), n


def scatter_mean(x, groups, n_groups):
    """Item 3 (variant): a per-group mean by counting in Python and accumulating rows with
    `+=`, then dividing by the counts, and a within-group variance of the rows."""
    sums = vnp.zeros((n_groups, x.shape[1]))
    counts = [0] * n_groups
    for row, g in zip(x, groups):
        sums[g] += row
        counts[g] += 1
    means = sums / np.maximum(np.array(counts), 1)[:, None]
    return sum(vnp.sum((row - means[g]) ** 2) for row, g in zip(x, groups))


def scatter_mean_ref(x, plan, groups, n_groups):
    counts = np.maximum(np.bincount(groups, minlength=n_groups), 1)
    means = segment_sum(x, plan) / counts[:, None]
    return np.sum((x - means[groups]) ** 2)


def scatter_mean_inputs(rng, n, d, n_groups):
    return normal(rng, n, d), [int(g) for g in rng.integers(0, n_groups, n)], n_groups


def _prep_groups(args):
    x, groups, k = args
    return x, segments(groups, k), np.asarray(groups), k


def write_then_read_rows(X, W, g):
    """Item 1 (variant): each iteration writes a row, h[i] = tanh(X[i] @ W), then reads it back
    to write a second buffer, out[i] = h[i] * g + h[i] ** 2."""
    n = X.shape[0]
    h = vnp.zeros((n, W.shape[1]))
    out = vnp.zeros((n, W.shape[1]))
    for i in range(n):
        h[i] = vnp.tanh(X[i] @ W)
        out[i] = h[i] * g + h[i] ** 2
    return vnp.sum(out)


def write_then_read_rows_ref(X, W, g):
    h = np.tanh(X @ W)
    return np.sum(h * g + h ** 2)


def write_read_inputs(rng, n, d, h):
    return normal(rng, n, d), normal(rng, d, h, scale=d ** -0.5), normal(rng, h)


def center_rows_inplace(x, s):
    """Item 1 (variant): per row, y[i] = x[i] * s then y[i] -= y[i].mean() and y[i] /=
    sqrt(mean(y[i]**2) + eps): three read-modify-writes of one row, by enumerate."""
    y = vnp.empty_like(x)
    for i, row in enumerate(x):
        y[i] = row * s
        y[i] -= y[i].mean()
        y[i] /= vnp.sqrt(vnp.mean(y[i] ** 2) + 1e-5)
    return vnp.sum(y * vnp.cos(x))


def center_rows_inplace_ref(x, s):
    y = x * s
    y = y - y.mean(1, keepdims=True)
    y = y / np.sqrt(np.mean(y ** 2, 1, keepdims=True) + 1e-5)
    return np.sum(y * np.cos(x))


def center_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def stacked_layer_rows(W, b, X):
    """Item 7 (variant): a layer over the rows of X by `for x in X` in a comprehension,
    np.stack-ed, shared W and b, then a squared error."""
    H = vnp.stack([vnp.tanh(W @ x + b) for x in X])
    return vnp.sum((H - 0.5) ** 2)


def stacked_layer_rows_ref(W, b, X):
    return np.sum((np.tanh(X @ W.T + b) - 0.5) ** 2)


def stacked_layer_inputs(rng, n, d, h):
    return normal(rng, h, d, scale=d ** -0.5), normal(rng, h, scale=0.1), normal(rng, n, d)


def cauchy(a, b, s):
    return 1.0 / (1.0 + vnp.sum((a - b) ** 2) / s)


def map_kernel_arg(X, Y, s, kernel):
    """Item 7 (variant): a kernel function passed as an argument and applied with map over
    two row sequences and a repeated scale, sum(map(kernel, X, Y, [s] * n))."""
    return sum(map(kernel, X, Y, [s] * len(X)))


def map_kernel_arg_ref(X, Y, s, kernel):
    return np.sum(1.0 / (1.0 + np.sum((X - Y) ** 2, axis=1) / s))


def map_kernel_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d), np.array(1.5), cauchy


def weighted_coeff_sum(X, coeffs):
    """Item 4 (variant): Python float coefficients zipped with rows, sum(c * sum(x**2) + c**2
    for c, x in zip(coeffs, X)), a scalar mixed from a data term and a constant term."""
    return sum(c * vnp.sum(vnp.sin(x) ** 2) + c ** 2 for c, x in zip(coeffs, X))


def weighted_coeff_sum_ref(X, coeffs):
    return np.sum(coeffs * np.sum(np.sin(X) ** 2, axis=1)) + np.sum(coeffs ** 2)


def coeff_inputs(rng, n, d):
    return normal(rng, n, d), [float(c) for c in rng.random(n)]


def _prep_coeffs(args):
    return args[0], np.asarray(args[1])


PATTERNS = [
    Pattern("edges_int_arrays", 3, edges_int_arrays, edges_int_arrays_ref,
            edges_int_arrays_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1), prepare=_prep_int_arrays, tags=("variant",)),
    Pattern("edge_arrays_zip_rmw", 3, edge_arrays_zip_rmw, edge_arrays_zip_rmw_ref,
            edge_arrays_zip_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1, 2), prepare=_prep_zip_rmw, tags=("variant",)),
    Pattern("edges_e2_array", 3, edges_e2_array, edges_e2_array_ref, edges_e2_inputs,
            {"small": {"n": 5, "e": 9, "d": 2}, "default": {"n": 1000, "e": 4000, "d": 16}},
            (0,), tags=("variant",)),
    Pattern("weighted_edge_tuples", 3, weighted_edge_tuples, weighted_edge_tuples_ref,
            weighted_tuples_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1), prepare=_prep_weighted, tags=("variant",)),
    Pattern("undirected_messages", 3, undirected_messages, undirected_messages_ref,
            undirected_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1), prepare=_prep_both_ways, tags=("variant",)),
    Pattern("degree_normalized_gcn", 3, degree_normalized_gcn, degree_normalized_gcn_ref,
            undirected_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1), prepare=_prep_gcn, tags=("variant",)),
    Pattern("weighted_dirichlet", 3, weighted_dirichlet, weighted_dirichlet_ref,
            weighted_dirichlet_inputs,
            {"small": {"n": 5, "e": 9, "d": 2}, "default": {"n": 1000, "e": 4000, "d": 16}},
            (0, 1), prepare=_prep_pairs, tags=("variant",)),
    Pattern("spring_network", 3, spring_network, spring_network_ref, spring_inputs,
            {"small": {"n": 5, "e": 9}, "default": {"n": 1000, "e": 4000}}, (0, 1),
            prepare=_prep_pairs, tags=("variant",)),
    Pattern("rmw_repeated", 1, rmw_repeated, rmw_repeated_ref, rmw_inputs,
            {"small": {"e": 9, "n": 4, "d": 2}, "default": {"e": 3000, "n": 300, "d": 16}},
            (0,), prepare=_prep_rmw, tags=("variant",)),
    Pattern("scatter_mean", 3, scatter_mean, scatter_mean_ref, scatter_mean_inputs,
            {"small": {"n": 9, "d": 2, "n_groups": 3},
             "default": {"n": 3000, "d": 16, "n_groups": 50}}, (0,), prepare=_prep_groups,
            tags=("variant",)),
    Pattern("write_then_read_rows", 1, write_then_read_rows, write_then_read_rows_ref,
            write_read_inputs, {"small": {"n": 5, "d": 3, "h": 2},
                                "default": {"n": 2000, "d": 32, "h": 32}}, (0, 1, 2),
            tags=("variant",)),
    Pattern("center_rows_inplace", 1, center_rows_inplace, center_rows_inplace_ref,
            center_inputs, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 64}},
            (0, 1), tags=("variant",)),
    Pattern("stacked_layer_rows", 7, stacked_layer_rows, stacked_layer_rows_ref,
            stacked_layer_inputs, {"small": {"n": 5, "d": 3, "h": 2},
                                   "default": {"n": 2000, "d": 32, "h": 64}}, (0, 1, 2),
            target="single", tags=("variant",)),
    Pattern("map_kernel_arg", 7, map_kernel_arg, map_kernel_arg_ref, map_kernel_inputs,
            {"small": {"n": 5, "d": 3}, "default": {"n": 3000, "d": 32}}, (0, 1, 2),
            tags=("variant",)),
    Pattern("weighted_coeff_sum", 4, weighted_coeff_sum, weighted_coeff_sum_ref,
            coeff_inputs, {"small": {"n": 5, "d": 3}, "default": {"n": 3000, "d": 32}}, (0,),
            target="single", prepare=_prep_coeffs, tags=("variant",)),
]
