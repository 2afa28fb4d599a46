"""Loops whose iterations split a vector of their own into fields of several lengths (item 1,
batch/fields.py): a camera row unpacked into rotation, translation, focal length, centre and
distortion per observation (GradBench's ba), and a per-row Jacobian block split into column
blocks written transposed into an output buffer (ba's blocks placed per observation)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def observation_fields(cams, X):
    """Item 1: per observation, cam = cams[i] split into rot, t, f, c, k; a distorted
    projection of sin(rot) * X[i] + t, squared and summed."""
    tot = 0.0
    for i in range(X.shape[0]):
        cam = cams[i]
        rot, t, f, c, k = cam[0:3], cam[3:6], cam[6], cam[7:9], cam[9:11]
        p = vnp.sin(rot) * X[i] + t
        q = p[0:2] / (p[2] + 4.0)
        r2 = vnp.sum(q * q)
        d = q * (1 + k[0] * r2 + k[1] * r2 * r2)
        tot = tot + vnp.sum((f * d + c) ** 2)
    return tot


def observation_fields_ref(cams, X):
    p = np.sin(cams[:, 0:3]) * X + cams[:, 3:6]
    q = p[:, 0:2] / (p[:, 2:3] + 4.0)
    r2 = np.sum(q * q, axis=1, keepdims=True)
    d = q * (1 + cams[:, 9:10] * r2 + cams[:, 10:11] * r2 * r2)
    return np.sum((cams[:, 6:7] * d + cams[:, 7:9]) ** 2)


def block_rows_written(A, x):
    """Item 1: per row, J = tanh(outer(A[i], x[i])) (6 x 2) written transposed into out[i] by
    row blocks 0:3, 3:5 (doubled) and 5; then sum(out * cos(out))."""
    n = A.shape[0]
    out = vnp.zeros((n, 2, 6))
    for i in range(n):
        J = vnp.tanh(A[i][:, None] * x[i][None, :])
        out[i, :, 0:3] = J[0:3].T
        out[i, :, 3:5] = 2.0 * J[3:5].T
        out[i, :, 5] = J[5]
    return vnp.sum(out * vnp.cos(out))


def block_rows_written_ref(A, x):
    J = np.tanh(A[:, :, None] * x[:, None, :])
    out = np.concatenate([J[:, 0:3], 2.0 * J[:, 3:5], J[:, 5:6]], axis=1).transpose(0, 2, 1)
    return np.sum(out * np.cos(out))


def _camera_inputs(rng, n):
    return normal(rng, n, 11, scale=0.3), normal(rng, n, 3)


def _block_inputs(rng, n):
    return normal(rng, n, 6), normal(rng, n, 2)


PATTERNS = [
    Pattern("observation_fields", 1, observation_fields, observation_fields_ref,
            _camera_inputs, {"small": {"n": 16}, "default": {"n": 1000}}, (0, 1)),
    Pattern("block_rows_written", 1, block_rows_written, block_rows_written_ref,
            _block_inputs, {"small": {"n": 16}, "default": {"n": 1000}}, (0, 1)),
]
