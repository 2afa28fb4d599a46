"""ht: hand tracking, ADBench's skinned hand model fitted to points (evals/ht).

A port of the reference (cpp/gradbench/evals/ht.hpp): rotation matrices filled entry by entry,
a loop over the bones for the posed and absolute transforms and the skinning, a loop over the
points for the errors. The Jacobian is `vg.jacfwd` over the 26 pose parameters, and, in the
"complicated" variant, over each point's own two barycentric coordinates (a loop over the points).
The small-angle branch of the global rotation is a `vnp.where`.
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def eye(n):
    """An identity buffer to write into. (`vnp.eye` gives a plain NumPy array, into which a
    traced value cannot be written: a finding of bench/gradbench, see its README.)"""
    return vnp.zeros((n, n)) + np.eye(n)


def angle_axis_to_rotation_matrix(angle_axis):
    norm = vnp.sqrt(vnp.sum(angle_axis * angle_axis))
    small = norm < 0.0001
    safe = vnp.where(small, 1.0, norm)  # keeps the unused branch's gradient finite
    x, y, z = angle_axis[0] / safe, angle_axis[1] / safe, angle_axis[2] / safe
    s, c = vnp.sin(safe), vnp.cos(safe)
    R = vnp.zeros((3, 3))
    R[0, 0] = x * x + (1 - x * x) * c
    R[0, 1] = x * y * (1 - c) - z * s
    R[0, 2] = x * z * (1 - c) + y * s
    R[1, 0] = x * y * (1 - c) + z * s
    R[1, 1] = y * y + (1 - y * y) * c
    R[1, 2] = y * z * (1 - c) - x * s
    R[2, 0] = x * z * (1 - c) - y * s
    R[2, 1] = z * y * (1 - c) + x * s
    R[2, 2] = z * z + (1 - z * z) * c
    return vnp.where(small, np.eye(3), R)


def euler_angles_to_rotation_matrix(xzy):
    tx, ty, tz = xzy[0], xzy[2], xzy[1]
    Rx = eye(3)
    Rx[1, 1] = vnp.cos(tx)
    Rx[2, 1] = vnp.sin(tx)
    Rx[1, 2] = -Rx[2, 1]
    Rx[2, 2] = Rx[1, 1]
    Ry = eye(3)
    Ry[0, 0] = vnp.cos(ty)
    Ry[0, 2] = vnp.sin(ty)
    Ry[2, 0] = -Ry[0, 2]
    Ry[2, 2] = Ry[0, 0]
    Rz = eye(3)
    Rz[0, 0] = vnp.cos(tz)
    Rz[1, 0] = vnp.sin(tz)
    Rz[0, 1] = -Rz[1, 0]
    Rz[1, 1] = Rz[0, 0]
    return Rz @ Ry @ Rx


def to_pose_params(theta, n_bones):
    """Rows: global rotation, scale, global translation, then one (x, z, y) angle row per bone."""
    pose = vnp.zeros((n_bones + 3, 3))
    pose[0] = theta[0:3]
    pose[1] = 1.0
    pose[2] = theta[3:6]
    i_theta, i_pose = 6, 5
    for _finger in range(5):
        for joint in range(3):
            pose[i_pose, 0] = theta[i_theta]
            i_theta += 1
            if joint == 0:
                pose[i_pose, 1] = theta[i_theta]
                i_theta += 1
            i_pose += 1
        i_pose += 1
    return pose


def skinned_vertex_positions(pose, model):
    base_relatives, inverse_base_absolutes, base_positions, weights, parents, mirrored = model
    absolutes = []
    for i, parent in enumerate(parents):
        tr = eye(4)
        tr[:3, :3] = euler_angles_to_rotation_matrix(pose[i + 3])
        relative = base_relatives[i] @ tr
        absolutes.append(relative if parent == -1 else absolutes[parent] @ relative)
    positions = vnp.zeros((3, base_positions.shape[0]))
    for i in range(len(parents)):
        transform = absolutes[i] @ inverse_base_absolutes[i]
        positions = positions + (transform @ base_positions.T)[:3] * weights[:, i]
    if mirrored:
        positions[0] = -positions[0]
    R = angle_axis_to_rotation_matrix(pose[0]) * pose[1]   # columns scaled
    return R @ positions + pose[2][:, None]


def objective_simple(theta, points, model, correspondences):
    v = skinned_vertex_positions(to_pose_params(theta, len(model[4])), model)
    err = vnp.empty(points.shape)
    for i, c in enumerate(correspondences):
        err[i] = points[i] - v[:, c]
    return err


def point_error(u, point, va, vb, vc):
    return point - (u[0] * va + u[1] * vb + (1 - u[0] - u[1]) * vc)


d_point_error = vg.jacfwd(point_error)


def objective_complicated(theta, us, points, model, correspondences, triangles):
    v = skinned_vertex_positions(to_pose_params(theta, len(model[4])), model)
    err = vnp.empty(points.shape)
    for i, c in enumerate(correspondences):
        a, b, d = triangles[c]
        err[i] = point_error(us[i], points[i], v[:, a], v[:, b], v[:, d])
    return err


d_simple = vg.jacfwd(objective_simple)
d_complicated_theta = vg.jacfwd(objective_complicated)


def jacobian_complicated(theta, us, points, model, correspondences, triangles):
    J_theta = d_complicated_theta(theta, us, points, model, correspondences, triangles)
    v = skinned_vertex_positions(to_pose_params(theta, len(model[4])), model)
    J_us = vnp.empty(points.shape + (2,))
    for i, c in enumerate(correspondences):
        a, b, d = triangles[c]
        J_us[i] = d_point_error(us[i], points[i], v[:, a], v[:, b], v[:, d])
    return vnp.concatenate([J_us, J_theta], axis=2)


jit_simple, jit_complicated = vg.jit(objective_simple), vg.jit(objective_complicated)
jit_d_simple, jit_d_complicated = vg.jit(d_simple), vg.jit(jacobian_complicated)


def _arrays(input):
    """(arguments, complicated?): static structure (parents, correspondences, triangles) as
    tuples, which vecgrad compiles in."""
    f = np.float64
    m = input["data"]["model"]
    model = (np.asarray(m["base_relatives"], f), np.asarray(m["inverse_base_absolutes"], f),
             np.asarray(m["base_positions"], f), np.asarray(m["weights"], f),
             tuple(int(p) for p in m["parents"]), bool(m["is_mirrored"]))
    theta = np.asarray(input["theta"], f)
    points = np.asarray(input["data"]["points"], f)
    corr = tuple(int(c) for c in input["data"]["correspondences"])
    if input["us"]:
        triangles = tuple(tuple(int(t) for t in tri) for tri in m["triangles"])
        us = np.asarray(input["us"], f)
        return (theta, us, points, model, corr, triangles), True
    return (theta, points, model, corr), False


def prepare_objective(input):
    args, complicated = _arrays(input)
    fn = jit_complicated if complicated else jit_simple
    return (lambda: fn(*args)), (lambda e: e.ravel().tolist())


def prepare_jacobian(input):
    args, complicated = _arrays(input)
    fn = jit_d_complicated if complicated else jit_d_simple
    return (lambda: fn(*args)), (lambda J: J.reshape(-1, J.shape[-1]).tolist())


FUNCTIONS = {"objective": prepare_objective, "jacobian": prepare_jacobian}


def explain_args(function, input):
    """A scalar of the objective, its function and arguments, for `vg.explain`."""
    args, complicated = _arrays(input)
    fn = objective_complicated if complicated else objective_simple

    def loss(theta, *rest):
        return vnp.sum(fn(theta, *rest) ** 2)
    return loss, args, 0
