"""ba: bundle adjustment reprojection errors and their sparse Jacobian (evals/ba, ADBench).

As the reference (cpp/gradbench/evals/ba.hpp and PyTorch's tool): one function for one
observation, a loop over the p observations, and for the Jacobian the 2 x 15 block of each
observation by `vg.jacfwd` (camera, point, weight), placed into the sparse (CSR) matrix. The
branch of the Rodrigues rotation on theta = 0 is a `vnp.where`.
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

N_CAM = 11


def rodrigues_rotate_point(rot, X):
    sqtheta = vnp.sum(rot * rot)
    nonzero = sqtheta != 0
    theta = vnp.sqrt(vnp.where(nonzero, sqtheta, 1.0))  # the where keeps theta's gradient finite
    w = rot / theta
    rotated = (X * vnp.cos(theta) + vnp.cross(w, X) * vnp.sin(theta)
               + w * vnp.dot(w, X) * (1 - vnp.cos(theta)))
    return vnp.where(nonzero, rotated, X + vnp.cross(rot, X))


def project(cam, X):
    Xcam = rodrigues_rotate_point(cam[0:3], X - cam[3:6])
    p = Xcam[0:2] / Xcam[2]
    rsq = vnp.sum(p * p)
    distorted = p * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
    return distorted * cam[6] + cam[7:9]


def reproj_error(cam, X, w, feat):
    return w * (project(cam, X) - feat)


def w_error(w):
    return 1 - w * w


def objective(cams, X, w, feats):
    n, m, p = cams.shape[0], X.shape[0], w.shape[0]
    reproj = vnp.empty((p, 2))
    w_err = vnp.empty(p)
    for i in range(p):
        reproj[i] = reproj_error(cams[i % n], X[i % m], w[i], feats[i])
        w_err[i] = w_error(w[i])
    return reproj, w_err


block = vg.jacfwd(reproj_error, argnums=(0, 1, 2))
w_block = vg.grad(w_error)


def jacobian_blocks(cams, X, w, feats):
    """Each observation's 2 x 15 block and each weight's derivative."""
    n, m, p = cams.shape[0], X.shape[0], w.shape[0]
    blocks = vnp.empty((p, 2, N_CAM + 4))
    w_d = vnp.empty(p)
    for i in range(p):
        dcam, dX, dw = block(cams[i % n], X[i % m], w[i], feats[i])
        blocks[i, :, :N_CAM] = dcam
        blocks[i, :, N_CAM:N_CAM + 3] = dX
        blocks[i, :, N_CAM + 3] = dw
        w_d[i] = w_block(w[i])
    return blocks, w_d


objective_jit = vg.jit(objective)
blocks_jit = vg.jit(jacobian_blocks)


def sparse(n, m, p, blocks, w_d):
    """The CSR matrix of GradBench's ba.hpp SparseMat: rows, cols and vals."""
    i = np.arange(p)
    cam_cols = N_CAM * (i % n)[:, None] + np.arange(N_CAM)
    pt_cols = N_CAM * n + 3 * (i % m)[:, None] + np.arange(3)
    w_cols = (N_CAM * n + 3 * m + i)[:, None]
    cols = np.concatenate([cam_cols, pt_cols, w_cols], axis=1)       # p x 15
    cols = np.concatenate([np.repeat(cols, 2, axis=0).ravel(), N_CAM * n + 3 * m + i])
    vals = np.concatenate([np.asarray(blocks).ravel(), np.asarray(w_d)])
    rows = np.concatenate([np.arange(2 * p + 1) * (N_CAM + 4),
                           2 * p * (N_CAM + 4) + np.arange(1, p + 1)])
    return rows, cols, vals


def _arrays(input):
    n, m, p = input["n"], input["m"], input["p"]
    cams = np.tile(np.asarray(input["cam"], dtype=np.float64), (n, 1))
    X = np.tile(np.asarray(input["x"], dtype=np.float64), (m, 1))
    w = np.full(p, float(input["w"]))
    feats = np.tile(np.asarray(input["feat"], dtype=np.float64), (p, 1))
    return cams, X, w, feats


def _objective_output(out):
    reproj, w_err = out
    return {"reproj_error": {"elements": reproj[0].tolist(), "repeated": len(reproj)},
            "w_err": {"element": float(w_err[0]), "repeated": len(w_err)}}


def _jacobian_output(out):
    rows, cols, vals = out
    def ends(a):
        return [*a[:30].tolist(), a[-1].item()]
    return {"rows": ends(rows), "cols": ends(cols), "vals": ends(vals)}


def prepare_objective(input):
    args = _arrays(input)
    return (lambda: objective_jit(*args)), _objective_output


def prepare_jacobian(input):
    args = _arrays(input)
    n, m, p = input["n"], input["m"], input["p"]
    return (lambda: sparse(n, m, p, *blocks_jit(*args))), _jacobian_output


FUNCTIONS = {"objective": prepare_objective, "jacobian": prepare_jacobian}


def explain_args(function, input):
    """The objective's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    def loss(cams, X, w, feats):
        reproj, w_err = objective(cams, X, w, feats)
        return vnp.sum(reproj) + vnp.sum(w_err)
    return loss, _arrays(input), (0, 1, 2)
