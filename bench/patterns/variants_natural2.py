"""Natural variants of edge lists, read-modify-write and mixed sums (issue 14, items 1, 3, 4) in
the *program styles* the suite lacked: parameters held in a small class or a dict, closures and
lambdas passed as kernels, `functools.reduce`, `itertools.combinations` / `product`,
`enumerate(zip(...))`, lists built with `.append` then `np.stack` / `np.concatenate`, generator
functions, `while` loops with a counter, `continue` / `break` on Python conditions, nested
helpers called per item, kernels returning tuples, dict accumulators keyed by Python ints, two
rounds of message passing, scatter-means with counts from the loop, `sum(...) / len(...)`,
segment softmax over neighbour lists, triplet and contrastive losses over index lists, a sparse
COO mat-vec and CSR rows through `indptr`.

Each has a hand-vectorized NumPy reference. Python's builtin `max(buf[i], v)` and `min(...)`
of a comprehension of traced 0-d values are folds of selections (vecgrad.pybuiltins);
`np.array(list_of_traced)` stays refused with a typed error (NumPy's own constructor cannot
return a traced array), so the programs here build arrays with `np.stack`."""
from __future__ import annotations

import functools
import itertools

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges

_E = {"small": {"n": 6, "e": 11, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}}
_ROWS = {"small": {"n": 5, "d": 3}, "default": {"n": 3000, "d": 32}}


def _edges_prep(args):
    """(arrays..., edges) -> (arrays..., src, dst, plan of dst)."""
    *arrays, edges = args
    src, dst = np.asarray(edges).reshape(-1, 2).T
    return (*arrays, src, dst, segments(dst, len(arrays[0])))


def _gnn_inputs(rng, n, e, f):
    return (normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), normal(rng, f, scale=0.1),
            random_edges(rng, n, e))


# ------------------------------------------------------------------------------ edge lists

class _Layer:
    """A user's layer: parameters as attributes, a method per edge."""

    def __init__(self, W, b):
        self.W, self.b = W, b

    def message(self, h):
        return np.tanh(h @ self.W + self.b)


def class_params_messages(x, W, b, edges):
    """Item 3 (style): parameters held in a small class (self.W, self.b) whose method makes
    each edge's message, agg[d] += layer.message(x[s])."""
    layer = _Layer(W, b)
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for s, d in edges:
        agg[d] += layer.message(x[s])
    return np.sum(agg ** 2)


def class_params_messages_ref(x, W, b, src, dst, plan):
    return np.sum(segment_sum(np.tanh(x @ W + b)[src], plan) ** 2)


def nested_helper_gate(x, W, b, edges):
    """Item 3 (style): a helper defined inside the loss, itself calling a nested helper, per
    edge: out[d] += gate(h[s] @ b) * h[d]."""
    h = x @ W

    def gate(z):
        def sigmoid(t):
            return 1.0 / (1.0 + np.exp(-t))
        return sigmoid(z)

    out = vnp.zeros_like(h)
    for s, d in edges:
        out[d] += gate(h[s] @ b) * h[d]
    return np.sum(np.tanh(out))


def nested_helper_gate_ref(x, W, b, src, dst, plan):
    h = x @ W
    g = 1.0 / (1.0 + np.exp(-(h @ b)))
    return np.sum(np.tanh(segment_sum(g[src][:, None] * h[dst], plan)))


def dict_accumulator_int_keys(x, W, b, edges):
    """Items 3, 4 (style): a dict accumulator keyed by Python ints, acc[d] = acc.get(d, 0) +
    x[s] @ W, then a sum over acc.values()."""
    acc = {}
    for s, d in edges:
        acc[d] = acc.get(d, 0.0) + x[s] @ W
    return sum(np.sum(np.tanh(v + b) ** 2) for v in acc.values())


def dict_accumulator_int_keys_ref(x, W, b, src, dst, plan):
    present = np.unique(dst)
    return np.sum(np.tanh(segment_sum((x @ W)[src], plan)[present] + b) ** 2)


def two_round_messages(x, W, b, edges):
    """Item 3 (style): two rounds of message passing over one edge list, the second reading
    the first's buffer, with a residual."""
    h = x
    for _ in range(2):
        m = vnp.zeros((h.shape[0], W.shape[1]))
        for s, d in edges:
            m[d] += h[s] @ W
        h = np.tanh(m + b) + h
    return np.sum(h ** 2)


def two_round_messages_ref(x, W, b, src, dst, plan):
    h = x
    for _ in range(2):
        h = np.tanh(segment_sum((h @ W)[src], plan) + b) + h
    return np.sum(h ** 2)


def scatter_mean_counts(x, W, b, edges):
    """Item 3 (style): scatter-mean with the counts made in the loop, agg[d] += x[s], cnt[d]
    += 1, then agg / max(cnt, 1)."""
    agg = vnp.zeros_like(x)
    cnt = vnp.zeros(x.shape[0])
    for s, d in edges:
        agg[d] += x[s]
        cnt[d] += 1.0
    mean = agg / np.maximum(cnt, 1.0)[:, None]
    return np.sum(np.tanh(mean @ W + b) ** 2)


def scatter_mean_counts_ref(x, W, b, src, dst, plan):
    cnt = np.bincount(dst, minlength=len(x)).astype(float)
    mean = segment_sum(x[src], plan) / np.maximum(cnt, 1.0)[:, None]
    return np.sum(np.tanh(mean @ W + b) ** 2)


def enumerate_zip_weights(x, w, src, dst):
    """Item 3 (style): `for e, (s, d) in enumerate(zip(src, dst))` over two static Python
    lists, weighted by a traced per-edge weight, out[d] += w[e] * x[s]."""
    out = vnp.zeros_like(x)
    for e, (s, d) in enumerate(zip(src, dst)):
        out[d] += w[e] * x[s]
    return np.sum(np.log1p(out ** 2))


def enumerate_zip_weights_ref(x, w, src, plan):
    return np.sum(np.log1p(segment_sum(w[:, None] * x[src], plan) ** 2))


def _zip_lists_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n, f), normal(rng, e), [int(v) for v in s], [int(v) for v in d]


def _prep_zip_lists(args):
    x, w, s, d = args
    return x, w, np.array(s), segments(np.array(d), len(x))


def append_then_concatenate(x, W, nbrs):
    """Item 3 (style): pieces appended per node (its neighbours' rows through W, a list index
    of varying length), then np.concatenate and one loss over all the pieces."""
    pieces = []
    for v in range(len(nbrs)):
        pieces.append(x[nbrs[v]] @ W)
    allm = np.concatenate(pieces)
    return np.sum(np.log1p(allm ** 2))


def append_then_concatenate_ref(x, W, flat):
    return np.sum(np.log1p(((x @ W)[flat]) ** 2))


def _nbr_list_inputs(rng, n, k, f):
    nbrs = [[int(u) for u in rng.integers(0, n, rng.integers(1, k + 1))] for _ in range(n)]
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), nbrs


def _prep_nbr_list(args):
    x, W, nbrs = args
    return x, W, np.concatenate(nbrs)


def segment_softmax_neighbours(x, a, nbrs):
    """Item 3 (style): attention as a softmax over each node's neighbour list (a dict of
    lists), p = exp(s - max s) / sum, out[v] = p @ x[nb]."""
    out = vnp.zeros_like(x)
    for v, nb in nbrs.items():
        s = x[nb] @ a
        p = np.exp(s - np.max(s))
        p = p / np.sum(p)
        out[v] = p @ x[nb]
    return np.sum(out ** 2)


def segment_softmax_neighbours_ref(x, a, flat, owner, starts):
    s = (x @ a)[flat]
    m = np.maximum.reduceat(s, starts)
    p = np.exp(s - m[owner])
    p = p / np.add.reduceat(p, starts)[owner]
    return np.sum(np.add.reduceat(p[:, None] * x[flat], starts, axis=0) ** 2)


def _nbr_dict_inputs(rng, n, k, f):
    nbrs = {v: [int(u) for u in rng.integers(0, n, rng.integers(1, k + 1))] for v in range(n)}
    return normal(rng, n, f), normal(rng, f), nbrs


def _prep_nbr_dict(args):
    x, a, nbrs = args
    flat = np.concatenate([nbrs[v] for v in range(len(x))])
    lens = [len(nbrs[v]) for v in range(len(x))]
    owner = np.repeat(np.arange(len(x)), lens)
    return x, a, flat, owner, np.r_[0, np.cumsum(lens)[:-1]]


def coo_matvec_loop(vals, x, rows, cols, n):
    """Item 3 (style): a sparse COO mat-vec written entry by entry with traced int arrays,
    y[rows[k]] += vals[k] * x[cols[k]], then a smooth loss of y."""
    y = vnp.zeros(n)
    for k in range(len(vals)):
        y[rows[k]] += vals[k] * x[cols[k]]
    return np.sum(np.sqrt(y ** 2 + 1.0))


def coo_matvec_loop_ref(vals, x, rows, cols, n):
    return np.sum(np.sqrt(np.bincount(rows, vals * x[cols], n) ** 2 + 1.0))


def _coo_inputs(rng, n, nnz):
    return (normal(rng, nnz), normal(rng, n), rng.integers(0, n, nnz), rng.integers(0, n, nnz),
            n)


def csr_rows_indptr(vals, x, indices, indptr):
    """Item 3 (style): CSR rows through a static `indptr` list, y[i] = vals[lo:hi] @
    x[indices[lo:hi]] with a traced `indices` array."""
    n = len(indptr) - 1
    y = vnp.zeros(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        y[i] = vals[lo:hi] @ x[indices[lo:hi]]
    return np.sum(np.tanh(y) ** 2)


def csr_rows_indptr_ref(vals, x, indices, owner, n):
    return np.sum(np.tanh(np.bincount(owner, vals * x[indices], n)) ** 2)


def _csr_inputs(rng, n, k):
    lens = rng.integers(1, k + 1, n)
    indptr = [0] + [int(v) for v in np.cumsum(lens)]
    nnz = indptr[-1]
    return normal(rng, nnz), normal(rng, n), rng.integers(0, n, nnz), indptr


def _prep_csr(args):
    vals, x, indices, indptr = args
    n = len(indptr) - 1
    return vals, x, indices, np.repeat(np.arange(n), np.diff(indptr)), n


def while_pairs_forces(x, pairs):
    """Items 1, 3 (style): a `while` loop with a counter over static pairs, F[i] += f; F[j]
    -= f (Newton's third law), then the work against x."""
    F = vnp.zeros_like(x)
    k = 0
    while k < len(pairs):
        i, j = pairs[k]
        f = np.tanh(x[i] - x[j])
        F[i] += f
        F[j] -= f
        k += 1
    return np.sum(F * x) + np.sum(F ** 2)


def while_pairs_forces_ref(x, pi, pj, plan_i, plan_j):
    f = np.tanh(x[pi] - x[pj])
    F = segment_sum(f, plan_i) - segment_sum(f, plan_j)
    return np.sum(F * x) + np.sum(F ** 2)


def _pairs_inputs(rng, n, e, f):
    return normal(rng, n, f), [(int(i), int(j)) for i, j in rng.integers(0, n, (e, 2)) if i != j]


def _prep_pairs(args):
    x, pairs = args
    pi, pj = np.array(pairs).T
    return x, pi, pj, segments(pi, len(x)), segments(pj, len(x))


# ---------------------------------------------------------------------- read-modify-write

class _Accumulator:
    """A user's accumulator object holding the buffer it writes."""

    def __init__(self, n, d):
        self.buf = vnp.zeros((n, d))

    def add(self, i, v):
        self.buf[i] += v


def class_accumulator_rmw(x, W, idx):
    """Items 1, 3 (style): a buffer held in a small class, written through its method per
    item, acc.add(idx[k], tanh(x[k] @ W)) at repeated static positions."""
    acc = _Accumulator(max(idx) + 1, W.shape[1])
    for k, i in enumerate(idx):
        acc.add(i, np.tanh(x[k] @ W))
    return np.sum(acc.buf ** 2)


def class_accumulator_rmw_ref(x, W, plan):
    return np.sum(segment_sum(np.tanh(x @ W), plan) ** 2)


def _acc_inputs(rng, n, m, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), \
        [int(i) for i in rng.integers(0, m, n)]


def _prep_acc(args):
    x, W, idx = args
    return x, W, segments(np.array(idx), max(idx) + 1)


def while_counter_rmw(x, a):
    """Item 1 (style): a `while` loop with a counter, each row read, scaled and written back
    in place, buf[i] = buf[i] * a + x[i]."""
    buf = vnp.ones_like(x)
    i = 0
    while i < x.shape[0]:
        buf[i] = buf[i] * a + np.sin(x[i])
        i += 1
    return np.sum(buf ** 2)


def while_counter_rmw_ref(x, a):
    return np.sum((a + np.sin(x)) ** 2)


def _row_vec_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def product_grid_writes(a, b, s):
    """Item 1 (style): a kernel matrix written cell by cell over
    `itertools.product(range(n), range(m))`, G[i, j] = exp(-(a[i] - b[j])**2 / s)."""
    G = vnp.zeros((a.shape[0], b.shape[0]))
    for i, j in itertools.product(range(a.shape[0]), range(b.shape[0])):
        G[i, j] = np.exp(-(a[i] - b[j]) ** 2 / s)
    return np.sum(G @ b)


def product_grid_writes_ref(a, b, s):
    G = np.exp(-(a[:, None] - b[None, :]) ** 2 / s)
    return np.sum(G @ b)


def _grid_inputs(rng, n, m):
    return normal(rng, n), normal(rng, m), np.array(1.5)


def maximum_rmw_rows(X, w):
    """Item 1 (style): buf[i] = np.maximum(buf[i], v) per row (a running ReLU written back
    in place, what `max(buf[i], v)` would mean), then a second RMW pass scaling by a
    traced weight."""
    buf = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        buf[i] = np.maximum(buf[i], X[i] @ w)
    for i in range(X.shape[0]):
        buf[i] *= 1.0 + w[0] ** 2
    return np.sum(np.log1p(buf))


def maximum_rmw_rows_ref(X, w):
    return np.sum(np.log1p(np.maximum(X @ w, 0.0) * (1.0 + w[0] ** 2)))


def builtin_max_rmw(X, w):
    """Item 1 (style): Python's builtin max on 0-d values read and written back in place,
    buf[i] = max(buf[i], X[i] @ w - 0.5), then min() of the value and a cap."""
    buf = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        buf[i] = max(buf[i], X[i] @ w - 0.5)
        buf[i] = min(buf[i], 2.0)
    return np.sum(buf ** 2)


def builtin_max_rmw_ref(X, w):
    return np.sum(np.minimum(np.maximum(X @ w - 0.5, 0.0), 2.0) ** 2)


def tuple_state_rmw(X, W):
    """Item 1 (style): a per-row kernel returning a tuple (mean, scale) whose parts are
    written into two buffers, then read back together."""
    def stats(row):
        h = np.tanh(row @ W)
        return np.mean(h), np.sqrt(np.mean(h ** 2) + 1e-3)

    mu = vnp.zeros(X.shape[0])
    sd = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        mu[i], sd[i] = stats(X[i])
    return np.sum(mu / sd)


def tuple_state_rmw_ref(X, W):
    H = np.tanh(X @ W)
    return np.sum(H.mean(1) / np.sqrt((H ** 2).mean(1) + 1e-3))


def _xw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5)


# ------------------------------------------------------------------------------ mixed sums

def dict_params_rows(X, W, b, v):
    """Item 4 (style): parameters in a dict (params["W"], params["b"]), a per-row loss summed
    with Python's sum over a generator."""
    params = {"W": W, "b": b, "v": v}
    return sum(np.logaddexp(0.0, np.tanh(X[i] @ params["W"] + params["b"]) @ params["v"])
               for i in range(X.shape[0]))


def dict_params_rows_ref(X, W, b, v):
    return np.sum(np.logaddexp(0.0, np.tanh(X @ W + b) @ v))


def _xwbv_inputs(rng, n, d):
    return (normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), normal(rng, d, scale=0.1),
            normal(rng, d))


def closure_kernel_loss(X, w, c):
    """Item 4 (style): a closure over traced parameters passed as the kernel to a generic
    `loss(f)`, which sums f over the rows."""
    def loss(f):
        return sum(f(X[i]) for i in range(X.shape[0]))

    return loss(lambda r: np.log1p(np.exp(r @ w)) + c * np.sum(r ** 2))


def closure_kernel_loss_ref(X, w, c):
    return np.sum(np.log1p(np.exp(X @ w))) + c * np.sum(X ** 2)


def _xwc_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.5), normal(rng, d, scale=0.5), np.array(0.1)


def lambda_list_kernels(X, w):
    """Item 4 (style): a list of lambdas as kernels, summed over kernels and rows by a
    nested comprehension."""
    kernels = [lambda r: np.sum(r * w) ** 2, lambda r: np.sum(np.cos(r)), lambda r: r[0] * r[1]]
    return sum(k(X[i]) for k in kernels for i in range(X.shape[0]))


def lambda_list_kernels_ref(X, w):
    return np.sum((X @ w) ** 2) + np.sum(np.cos(X)) + np.sum(X[:, 0] * X[:, 1])


def functools_reduce_sum(X, mu, s):
    """Item 4 (style): `functools.reduce` with a lambda accumulating a per-row Gaussian
    energy from 0.0."""
    return functools.reduce(lambda acc, i: acc + np.sum(((X[i] - mu) / s) ** 2),
                            range(X.shape[0]), 0.0)


def functools_reduce_sum_ref(X, mu, s):
    return np.sum(((X - mu) / s) ** 2)


def _xmus_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d), np.abs(normal(rng, d)) + 0.5


def reduce_running_maximum(X, W):
    """Items 4, 6 (style): `functools.reduce(np.maximum, [...])` over rows mapped through W,
    a fold that is a max over the rows."""
    m = functools.reduce(np.maximum, [np.tanh(X[i] @ W) for i in range(X.shape[0])])
    return np.sum(m ** 2)


def reduce_running_maximum_ref(X, W):
    return np.sum(np.tanh(X @ W).max(0) ** 2)


def combinations_pair_energy(x, s):
    """Item 4 (style): pairs from `itertools.combinations(range(n), 2)`, a Gaussian pair
    energy summed into a scalar."""
    e = 0.0
    for i, j in itertools.combinations(range(x.shape[0]), 2):
        e += np.exp(-np.sum((x[i] - x[j]) ** 2) / s)
    return e


def combinations_pair_energy_ref(x, s):
    D = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    iu = np.triu_indices(len(x), 1)
    return np.sum(np.exp(-D[iu] / s))


def _pts_inputs(rng, n, d):
    return normal(rng, n, d), np.array(2.0)


def product_cross_terms(A, B):
    """Item 4 (style): `itertools.product` over two sets of rows, tanh of their dot products
    summed (a cross kernel)."""
    return sum(np.tanh(A[i] @ B[j]) for i, j in itertools.product(range(A.shape[0]),
                                                                   range(B.shape[0])))


def product_cross_terms_ref(A, B):
    return np.sum(np.tanh(A @ B.T))


def _ab_inputs(rng, n, m, d):
    return normal(rng, n, d, scale=0.5), normal(rng, m, d, scale=0.5)


def enumerate_zip_rows(X, Y, W, w):
    """Item 4 (style): `for k, (x, y) in enumerate(zip(X, Y))` over the rows of two traced
    arrays, a weighted squared error per row."""
    loss = 0.0
    for k, (x, y) in enumerate(zip(X, Y)):
        loss += w[k] * np.sum((x @ W - y) ** 2)
    return loss


def enumerate_zip_rows_ref(X, Y, W, w):
    return np.sum(w[:, None] * (X @ W - Y) ** 2)


def _xyww_inputs(rng, n, d):
    return (normal(rng, n, d), normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5),
            np.abs(normal(rng, n)))


def append_then_stack(X, W, b):
    """Item 4 (style): rows appended to a list in a loop, np.stack of the list, one loss."""
    rows = []
    for i in range(X.shape[0]):
        rows.append(np.tanh(X[i] @ W + b))
    H = np.stack(rows)
    return np.sum(H ** 2) + np.sum(H[:, 0])


def append_then_stack_ref(X, W, b):
    H = np.tanh(X @ W + b)
    return np.sum(H ** 2) + np.sum(H[:, 0])


def _xwb_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), normal(rng, d, scale=0.1)


def generator_yield_terms(X, c):
    """Item 4 (style): a generator function yielding one term per row and a regularizer,
    summed by Python's sum."""
    def terms():
        for i in range(X.shape[0]):
            yield np.sum(np.log1p(np.exp(X[i] - c)))
        yield 0.5 * np.sum(c ** 2)

    return sum(terms())


def generator_yield_terms_ref(X, c):
    return np.sum(np.log1p(np.exp(X - c))) + 0.5 * np.sum(c ** 2)


def _xc_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def continue_skip_rows(X, w, keep):
    """Item 4 (style): `continue` on a Python condition (a static list of flags) skipping
    rows, two kinds of terms for the rows kept."""
    total = 0.0
    for i in range(X.shape[0]):
        if not keep[i]:
            continue
        z = X[i] @ w
        total += np.logaddexp(0.0, z) if i % 2 else np.logaddexp(0.0, -z)
    return total


def continue_skip_rows_ref(X, w, odd, even):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z[odd])) + np.sum(np.logaddexp(0.0, -z[even]))


def _keep_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d), [bool(k) for k in rng.random(n) < 0.7]


def _prep_keep(args):
    X, w, keep = args
    idx = np.flatnonzero(keep)
    return X, w, idx[idx % 2 == 1], idx[idx % 2 == 0]


def break_at_limit(X, W, limit):
    """Item 4 (style): `for i, row in enumerate(X)` over a traced array's rows with a `break`
    at a static limit."""
    total = 0.0
    for i, row in enumerate(X):
        if i >= limit:
            break
        total += np.sum(np.tanh(row @ W) ** 2)
    return total


def break_at_limit_ref(X, W, limit):
    return np.sum(np.tanh(X[:limit] @ W) ** 2)


def _limit_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), (2 * n) // 3


def tuple_return_kernel(X, c):
    """Item 4 (style): a per-row kernel returning a tuple, unpacked and combined, s, m =
    kernel(X[i]); total += s - m."""
    def kernel(row):
        r = row - c
        return np.sum(r ** 2), np.max(r)

    total = 0.0
    for i in range(X.shape[0]):
        s, m = kernel(X[i])
        total += s - m
    return total


def tuple_return_kernel_ref(X, c):
    R = X - c
    return np.sum(R ** 2) - np.sum(R.max(1))


def sum_over_len(X, w):
    """Item 4 (style): `sum(losses) / len(losses)` of a list comprehension of per-row
    losses."""
    losses = [np.logaddexp(0.0, -(X[i] @ w)) for i in range(X.shape[0])]
    return sum(losses) / len(losses)


def sum_over_len_ref(X, w):
    return np.mean(np.logaddexp(0.0, -(X @ w)))


def min_over_centres(X, C):
    """Item 4 (style): a soft minimum over a comprehension of centres per point (what
    `min(...)` of a comprehension means, written with np.minimum folded by reduce), summed."""
    total = 0.0
    for i in range(X.shape[0]):
        total += functools.reduce(np.minimum, [np.sum((X[i] - C[k]) ** 2)
                                               for k in range(C.shape[0])])
    return total


def min_over_centres_ref(X, C):
    D = np.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    return np.sum(D.min(1))


def _centres_inputs(rng, n, k, d):
    return normal(rng, n, d), normal(rng, k, d)


def builtin_min_comprehension(X, C):
    """Item 4 (style): Python's builtin min of a generator over centres per point, summed by
    Python's sum (a k-means objective)."""
    return sum(min(np.sum((X[i] - C[k]) ** 2) for k in range(C.shape[0]))
               for i in range(X.shape[0]))


def builtin_min_comprehension_ref(X, C):
    D = np.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    return np.sum(D.min(1))


def triplet_index_lists(E, triplets, margin):
    """Item 4 (style): a triplet margin loss over a static list of (anchor, positive,
    negative) index triples."""
    loss = 0.0
    for a, p, n in triplets:
        dp = np.sum((E[a] - E[p]) ** 2)
        dn = np.sum((E[a] - E[n]) ** 2)
        loss += np.maximum(dp - dn + margin, 0.0)
    return loss / len(triplets)


def triplet_index_lists_ref(E, a, p, n, margin):
    dp = np.sum((E[a] - E[p]) ** 2, axis=1)
    dn = np.sum((E[a] - E[n]) ** 2, axis=1)
    return np.mean(np.maximum(dp - dn + margin, 0.0))


def _triplet_inputs(rng, v, m, d):
    return (normal(rng, v, d, scale=0.5), [tuple(int(t) for t in r)
                                            for r in rng.integers(0, v, (m, 3))], 0.5)


def _prep_triplets(args):
    E, t, margin = args
    a, p, n = np.array(t).T
    return E, a, p, n, margin


def contrastive_pairs(E, pairs, m):
    """Item 4 (style): a contrastive loss over (i, j, same) pairs: same * d + (1 - same) *
    max(m - d, 0), with the label a Python int."""
    loss = 0.0
    for i, j, same in pairs:
        d = np.sum((E[i] - E[j]) ** 2)
        loss += same * d + (1 - same) * np.maximum(m - d, 0.0)
    return loss


def contrastive_pairs_ref(E, i, j, same, m):
    d = np.sum((E[i] - E[j]) ** 2, axis=1)
    return np.sum(same * d + (1 - same) * np.maximum(m - d, 0.0))


def _contrastive_inputs(rng, v, k, d):
    ij = rng.integers(0, v, (k, 2))
    return (normal(rng, v, d, scale=0.3), [(int(a), int(b), int(s)) for (a, b), s in
                                           zip(ij, rng.integers(0, 2, k))], 1.0)


def _prep_contrastive(args):
    E, pairs, m = args
    i, j, s = np.array(pairs).T
    return E, i, j, s.astype(float), m


# ------------------------------------------------------------------------------- the suite

def _p(name, item, sizes, argnums, inputs, prepare=None):
    mod = globals()
    kw = {"prepare": prepare} if prepare is not None else {}
    return Pattern(name, item, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   tags=("variant", "natural", "style"), **kw)


_NBR = {"small": {"n": 5, "k": 3, "f": 3}, "default": {"n": 400, "k": 12, "f": 16}}
_PAIRS = {"small": {"n": 5, "e": 8, "f": 2}, "default": {"n": 1000, "e": 4000, "f": 8}}
PATTERNS = [
    _p("class_params_messages", 3, _E, (0, 1, 2), _gnn_inputs, _edges_prep),
    _p("nested_helper_gate", 3, _E, (0, 1, 2), _gnn_inputs, _edges_prep),
    _p("dict_accumulator_int_keys", 3, _E, (0, 1, 2), _gnn_inputs, _edges_prep),
    _p("two_round_messages", 3, _E, (0, 1, 2), _gnn_inputs, _edges_prep),
    _p("scatter_mean_counts", 3, _E, (0, 1, 2), _gnn_inputs, _edges_prep),
    _p("enumerate_zip_weights", 3, _E, (0, 1), _zip_lists_inputs, _prep_zip_lists),
    _p("append_then_concatenate", 3, _NBR, (0, 1), _nbr_list_inputs, _prep_nbr_list),
    _p("segment_softmax_neighbours", 3, _NBR, (0, 1), _nbr_dict_inputs, _prep_nbr_dict),
    _p("coo_matvec_loop", 3, {"small": {"n": 6, "nnz": 14},
                              "default": {"n": 2000, "nnz": 20000}}, (0, 1), _coo_inputs),
    _p("csr_rows_indptr", 3, {"small": {"n": 5, "k": 3}, "default": {"n": 2000, "k": 10}},
       (0, 1), _csr_inputs, _prep_csr),
    _p("while_pairs_forces", 3, _PAIRS, (0,), _pairs_inputs, _prep_pairs),
    _p("class_accumulator_rmw", 3, {"small": {"n": 7, "m": 3, "f": 3},
                                    "default": {"n": 3000, "m": 400, "f": 16}}, (0, 1),
       _acc_inputs, _prep_acc),
    _p("while_counter_rmw", 1, _ROWS, (0, 1), _row_vec_inputs),
    _p("product_grid_writes", 1, {"small": {"n": 3, "m": 4}, "default": {"n": 60, "m": 50}},
       (0, 1, 2), _grid_inputs),
    _p("maximum_rmw_rows", 1, _ROWS, (0, 1), _row_vec_inputs),
    _p("builtin_max_rmw", 1, _ROWS, (0, 1), _row_vec_inputs),
    _p("tuple_state_rmw", 1, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 32}},
       (0, 1), _xw_inputs),
    _p("dict_params_rows", 4, _ROWS, (0, 1, 2, 3), _xwbv_inputs),
    _p("closure_kernel_loss", 4, _ROWS, (0, 1, 2), _xwc_inputs),
    _p("lambda_list_kernels", 4, _ROWS, (0, 1), _row_vec_inputs),
    _p("functools_reduce_sum", 4, _ROWS, (0, 1, 2), _xmus_inputs),
    _p("reduce_running_maximum", 4, {"small": {"n": 5, "d": 3},
                                     "default": {"n": 2000, "d": 32}}, (0, 1), _xw_inputs),
    _p("combinations_pair_energy", 4, {"small": {"n": 5, "d": 2},
                                       "default": {"n": 80, "d": 3}}, (0, 1), _pts_inputs),
    _p("product_cross_terms", 4, {"small": {"n": 3, "m": 4, "d": 2},
                                  "default": {"n": 60, "m": 50, "d": 16}}, (0, 1), _ab_inputs),
    _p("enumerate_zip_rows", 4, _ROWS, (0, 1, 2, 3), _xyww_inputs),
    _p("append_then_stack", 4, _ROWS, (0, 1, 2), _xwb_inputs),
    _p("generator_yield_terms", 4, _ROWS, (0, 1), _xc_inputs),
    _p("continue_skip_rows", 4, _ROWS, (0, 1), _keep_inputs, _prep_keep),
    _p("break_at_limit", 4, _ROWS, (0, 1), _limit_inputs),
    _p("tuple_return_kernel", 4, _ROWS, (0, 1), _xc_inputs),
    _p("sum_over_len", 4, _ROWS, (0, 1), _row_vec_inputs),
    _p("min_over_centres", 4, {"small": {"n": 5, "k": 3, "d": 2},
                               "default": {"n": 1000, "k": 8, "d": 16}}, (0, 1),
       _centres_inputs),
    _p("builtin_min_comprehension", 4, {"small": {"n": 5, "k": 3, "d": 2},
                                        "default": {"n": 1000, "k": 8, "d": 16}}, (0, 1),
       _centres_inputs),
    _p("triplet_index_lists", 4, {"small": {"v": 6, "m": 5, "d": 3},
                                  "default": {"v": 500, "m": 3000, "d": 16}}, (0,),
       _triplet_inputs, _prep_triplets),
    _p("contrastive_pairs", 4, {"small": {"v": 6, "k": 5, "d": 3},
                                "default": {"v": 500, "k": 3000, "d": 16}}, (0,),
       _contrastive_inputs, _prep_contrastive),
]
