"""Natural variants written as users write them (issue 14), from the lead's probes of
session 30: sparse rows through a CSR `indptr` whose other factor is a NumPy constant
(`np.dot(vals[lo:hi], v[cols[lo:hi]])` with v the module's array) or a traced vector read at
the row's columns; neighbour lists of a random graph, some lists equal (nodes of degree one
share a neighbour), with per-edge NumPy weights; index lists of one length (5 nearest
neighbours read with np.take, a mesh's faces `X[f]` and their corners, an edge's two rows
`X[[u, v]]`); and second-order linear recurrences (an
AR(2) filter written into a zeros buffer, a Verlet integrator of a driven linear spring).

The sparse structure and the graph are the module's NumPy data, made once per size from a
fixed seed (as a user's script loads them), so the traced programs read them as constants.
References: np.bincount over the entries, np.add.at for the graph, scipy.signal.lfilter."""
from __future__ import annotations

import functools

import numpy as np
from scipy.signal import lfilter

from .core import normal, presets, variant


@functools.cache
def _csr(nnz: int, ncols: int) -> tuple:
    """indptr, cols, rows and a NumPy vector for a CSR matrix of `nnz` entries, rows of 1-11."""
    rng = np.random.default_rng(nnz)
    lens = []
    while sum(lens) < nnz:
        lens.append(int(rng.integers(1, 12)))
    lens[-1] -= sum(lens) - nnz
    lens = [n for n in lens if n]
    indptr = np.concatenate([[0], np.cumsum(lens)])
    cols = rng.integers(0, ncols, nnz)
    return indptr, cols, np.repeat(np.arange(len(lens)), lens), rng.standard_normal(ncols)


@functools.cache
def _graph(n: int) -> tuple:
    """Neighbour lists of 1-8 nodes for n nodes (an eighth of them copies of another's) and
    a positive weight per edge."""
    rng = np.random.default_rng(n)
    nbrs = [rng.choice(n, int(rng.integers(1, 9)), replace=False) for _ in range(n)]
    for i in rng.choice(n, n // 8, replace=False):
        nbrs[i] = nbrs[int(rng.integers(0, n))].copy()
    return nbrs, [rng.random(len(nb)) for nb in nbrs]


def _edges(n: int) -> tuple:
    nbrs, wts = _graph(n)
    return (np.repeat(np.arange(n), [len(nb) for nb in nbrs]), np.concatenate(nbrs),
            np.concatenate(wts))


def csr_const_matvec(vals):
    """Item 3: y = A v row by row through indptr, v a NumPy vector: `vals[lo:hi] @ v[c]`."""
    indptr, cols, _, v = _csr(len(vals), 80)
    y = np.zeros(len(indptr) - 1)
    for r in range(len(indptr) - 1):
        lo, hi = indptr[r], indptr[r + 1]
        y[r] = np.dot(vals[lo:hi], v[cols[lo:hi]])
    return np.sum(np.tanh(y))


def csr_const_matvec_ref(vals):
    indptr, cols, rows, v = _csr(len(vals), 80)
    return np.sum(np.tanh(np.bincount(rows, vals * v[cols], len(indptr) - 1)))


def csr_traced_matvec(vals, x):
    """Item 3: y = A x through indptr with x traced too: `vals[lo:hi] @ x[cols[lo:hi]]`."""
    indptr, cols, _, _ = _csr(len(vals), len(x))
    y = np.zeros(len(indptr) - 1)
    for r in range(len(indptr) - 1):
        lo, hi = indptr[r], indptr[r + 1]
        y[r] = np.dot(vals[lo:hi], x[cols[lo:hi]])
    return np.sum(np.tanh(y))


def csr_traced_matvec_ref(vals, x):
    indptr, cols, rows, _ = _csr(len(vals), len(x))
    return np.sum(np.tanh(np.bincount(rows, vals * x[cols], len(indptr) - 1)))


def csr_normalized_rows(vals):
    """Item 3: each row's dot with the NumPy vector's entries, over their norm."""
    indptr, cols, _, v = _csr(len(vals), 80)
    tot = 0.0
    for r in range(len(indptr) - 1):
        lo, hi = indptr[r], indptr[r + 1]
        w = v[cols[lo:hi]]
        tot += np.sum(vals[lo:hi] * w) ** 2 / (np.sum(w ** 2) + 1.0)
    return tot


def csr_normalized_rows_ref(vals):
    indptr, cols, rows, v = _csr(len(vals), 80)
    w = v[cols]
    n = len(indptr) - 1
    return np.sum(np.bincount(rows, vals * w, n) ** 2 / (np.bincount(rows, w * w, n) + 1.0))


def graph_edge_distances(X):
    """Item 3: weighted squared distances to each node's neighbours, `X[nb] - X[i]`."""
    nbrs, wts = _graph(len(X))
    tot = 0.0
    for i in range(len(X)):
        d = np.sum((X[nbrs[i]] - X[i]) ** 2, axis=1)
        tot += np.sum(wts[i] * d)
    return tot


def graph_edge_distances_ref(X):
    rows, cols, w = _edges(len(X))
    return np.sum(w * np.sum((X[cols] - X[rows]) ** 2, axis=1))


def graph_weighted_mean(X):
    """Item 3: each node's weighted sum of its neighbours' rows, written into a buffer."""
    nbrs, wts = _graph(len(X))
    H = np.zeros_like(X)
    for i in range(len(X)):
        H[i] = wts[i] @ X[nbrs[i]]
    return np.sum(np.tanh(H) ** 2)


def graph_weighted_mean_ref(X):
    rows, cols, w = _edges(len(X))
    H = np.zeros_like(X)
    np.add.at(H, rows, w[:, None] * X[cols])
    return np.sum(np.tanh(H) ** 2)


@functools.cache
def _knn(n: int) -> tuple:
    """For n points: 5 neighbours each (a list of Python ints), 2n triangles, 3n edges."""
    rng = np.random.default_rng(n + 1)
    knn = [list(rng.choice(n, 5, replace=False)) for _ in range(n)]
    return knn, rng.integers(0, n, (2 * n, 3)), rng.integers(0, n, (3 * n, 2))


def knn_kernel_sums(X):
    """Item 3: a Gaussian kernel over each point's 5 nearest neighbours, `np.take(X, nb, 0)`."""
    knn, _, _ = _knn(len(X))
    tot = 0.0
    for i in range(len(X)):
        nb = np.take(X, knn[i], axis=0)
        tot += np.sum(np.exp(-np.sum((nb - X[i]) ** 2, axis=1)))
    return tot


def knn_kernel_sums_ref(X):
    K = np.array(_knn(len(X))[0])
    d = X[K] - X[:, None]
    return np.sum(np.exp(-np.sum(d * d, axis=2)))


def mesh_face_normals(X):
    """Item 3: each face's normal from its corners, `p = X[f]; np.cross(p[1] - p[0], ...)`."""
    _, faces, _ = _knn(len(X))
    tot = 0.0
    for f in faces:
        p = X[f]
        n = np.cross(p[1] - p[0], p[2] - p[0])
        tot += np.sqrt(n @ n + 1e-6)
    return tot


def mesh_face_normals_ref(X):
    P = X[_knn(len(X))[1]]
    n = np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])
    return np.sum(np.sqrt(np.sum(n * n, axis=1) + 1e-6))


def edge_pair_rows(X):
    """Item 3: an edge's two rows read as one list, `p = X[[u, v]]`."""
    _, _, edges = _knn(len(X))
    tot = 0.0
    for u, v in edges:
        p = X[[u, v]]
        tot += np.sqrt(np.sum((p[0] - p[1]) ** 2) + 1e-6)
    return tot


def edge_pair_rows_ref(X):
    E = _knn(len(X))[2]
    d = X[E[:, 0]] - X[E[:, 1]]
    return np.sum(np.sqrt(np.sum(d * d, axis=1) + 1e-6))


def ar2_into_zeros(x):
    """Item 6: an AR(2) filter written into a zeros buffer, `y[t] = x[t] + a y[t-1] + b y[t-2]`."""
    y = np.zeros_like(x)
    for t in range(2, len(x)):
        y[t] = x[t] + 0.6 * y[t - 1] - 0.3 * y[t - 2]
    return np.sum(y ** 2)


def ar2_into_zeros_ref(x):
    xx = x.copy()
    xx[:2] = 0.0
    return np.sum(lfilter([1.0], [1.0, -0.6, 0.3], xx) ** 2)


def verlet_spring(f):
    """Item 6: Verlet steps of a linear spring driven by a force f[t],
    `q[t+1] = 2 q[t] - q[t-1] + h^2 (f[t] - k q[t])`."""
    q = np.zeros_like(f)
    for t in range(1, len(f) - 1):
        q[t + 1] = 2 * q[t] - q[t - 1] + 0.01 * (f[t] - 1.3 * q[t])
    return np.sum(q ** 2)


def verlet_spring_ref(f):
    a = 2 - 0.013
    u = np.concatenate([[0.0, 0.0], 0.01 * f[1:-1]])
    return np.sum(lfilter([1.0], [1.0, -a, 1.0], u) ** 2)


def _vals_in(rng, nnz):
    return (normal(rng, nnz),)


def _vals_x_in(rng, nnz):
    return normal(rng, nnz), normal(rng, 80)


def _rows_in(rng, n, d):
    return (normal(rng, n, d),)


def _x_in(rng, n):
    return (normal(rng, n),)


def _p(name, item, sizes, argnums, inputs):
    return variant(globals(), name, item, sizes, argnums, inputs)


_sz = presets

PATTERNS = [
    _p("csr_const_matvec", 3, _sz({"nnz": 40}, {"nnz": 900}), (0,), _vals_in),
    _p("csr_traced_matvec", 3, _sz({"nnz": 40}, {"nnz": 900}), (0, 1), _vals_x_in),
    _p("csr_normalized_rows", 3, _sz({"nnz": 40}, {"nnz": 900}), (0,), _vals_in),
    _p("graph_edge_distances", 3, _sz({"n": 16, "d": 3}, {"n": 200, "d": 6}), (0,), _rows_in),
    _p("graph_weighted_mean", 3, _sz({"n": 16, "d": 3}, {"n": 200, "d": 6}), (0,), _rows_in),
    _p("knn_kernel_sums", 3, _sz({"n": 12, "d": 3}, {"n": 300, "d": 3}), (0,), _rows_in),
    _p("mesh_face_normals", 3, _sz({"n": 12, "d": 3}, {"n": 300, "d": 3}), (0,), _rows_in),
    _p("edge_pair_rows", 3, _sz({"n": 12, "d": 3}, {"n": 300, "d": 3}), (0,), _rows_in),
    _p("ar2_into_zeros", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("verlet_spring", 6, _sz({"n": 12}, {"n": 1000}), (0,), _x_in),
]
