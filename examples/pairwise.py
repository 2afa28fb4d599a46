"""Pairwise cosine similarity with a softmax per batch slice (the first user report), written
the natural way: loops over column views that write into a buffer.

    python -m vecgrad explain examples/pairwise.py:pairwise_loss

`vecgrad explain` calls `example_args()` for the inputs and differentiates the arguments named
by `example_argnums` (here `a` and `b`; `wt` is a fixed weighting).
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def cosinesim(u, v):
    """Cosine similarity of two vectors."""
    return np.dot(u, v) / (np.sqrt(np.sum(u ** 2)) * vnp.linalg.norm(v))


def pairwise(a, b, K=cosinesim):
    """out[i, j, k] = K(b[:, i, k], a[:, j, k]), then a softmax over i for each k."""
    _W, R, B = a.shape
    N = b.shape[1]
    out = vnp.empty((N, R, B), dtype=a.dtype)   # a buffer to write into: vnp, not np
    for k in range(B):
        for j in range(R):
            aj = a[:, j, k]
            for i in range(N):
                out[i, j, k] = K(b[:, i, k], aj)
    for k in range(B):
        out[:, :, k] = vg.nn.softmax(out[:, :, k], axis=0)
    return out


def pairwise_loss(a, b, wt):
    """A scalar to differentiate: the weighted sum of the similarities."""
    return vnp.sum(pairwise(a, b) * wt)


example_argnums = (0, 1)


def example_args(N=16, W=64, R=4, B=16):
    """Inputs of the sizes in the user report, float32."""
    rng = np.random.default_rng(0)
    a = rng.random((W, R, B), dtype=np.float32)
    b = rng.random((W, N, B), dtype=np.float32)
    wt = rng.standard_normal((N, R, B)).astype(np.float32)
    return a, b, wt
