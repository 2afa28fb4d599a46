"""Linear recurrences whose coefficients telescope, read at their end (rewrite/telescope.py):
c = c * exp(u_old - u_new) + b, with u any stacked sequence (a running maximum, minimum,
mean, or an input), is at its last step exp(u_0 - u_T) c_0 + sum_s exp(u_s - u_T) b_s:
no scan forward or backward. Where every step's c is read, the scan stays.

Each program is checked against a plain NumPy loop (float64, rtol 1e-9), its unrolled trace
and central differences (test_scans.check), and for what its simplified graph holds."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def online_softmax(S, V):
    m, l_, acc = S[0], vnp.ones(S.shape[1]), V[0]
    for t in range(1, S.shape[0]):
        m_new = vnp.maximum(m, S[t])
        scale = vnp.exp(m - m_new)
        p = vnp.exp(S[t] - m_new)
        l_ = l_ * scale + p
        acc = acc * scale + p * V[t]
        m = m_new
    return vnp.sum(acc / l_)


def online_softmax_np(S, V):
    m, l_, acc = S[0], np.ones(S.shape[1]), V[0]
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        scale, p = np.exp(m - m_new), np.exp(S[t] - m_new)
        l_, acc, m = l_ * scale + p, acc * scale + p * V[t], m_new
    return np.sum(acc / l_)


def logsumexp_final(S, V):
    """The normalizer alone, its state starting at zero, read through log at the end."""
    m, s = vnp.full(S.shape[1], -1e3), vnp.zeros(S.shape[1])
    for t in range(S.shape[0]):
        m_new = vnp.maximum(m, S[t])
        s = s * vnp.exp(m - m_new) + vnp.exp(S[t] - m_new) * V[t] ** 2
        m = m_new
    return vnp.sum(vnp.log(s) + m)


def logsumexp_final_np(S, V):
    m, s = np.full(S.shape[1], -1e3), np.zeros(S.shape[1])
    for t in range(S.shape[0]):
        m_new = np.maximum(m, S[t])
        s = s * np.exp(m - m_new) + np.exp(S[t] - m_new) * V[t] ** 2
        m = m_new
    return np.sum(np.log(s) + m)


def min_reference(S, V):
    """Kept relative to a running minimum: the coefficient is exp(u_new - u_old)."""
    m, s = S[0], V[0]
    for t in range(1, S.shape[0]):
        m_new = vnp.minimum(m, S[t])
        s = s * vnp.exp(m_new - m) + vnp.exp(m_new - S[t]) * V[t]
        m = m_new
    return vnp.sum(s * s)


def min_reference_np(S, V):
    m, s = S[0], V[0]
    for t in range(1, S.shape[0]):
        m_new = np.minimum(m, S[t])
        s = s * np.exp(m_new - m) + np.exp(m_new - S[t]) * V[t]
        m = m_new
    return np.sum(s * s)


def mean_reference(S, V):
    """Relative to a running mean (any sequence telescopes, not only a monotone one)."""
    r, s = vnp.zeros(S.shape[1]), vnp.zeros(S.shape[1])
    for t in range(S.shape[0]):
        r_new = r + (S[t] - r) / (t + 1)
        s = s * vnp.exp(r - r_new) + V[t]
        r = r_new
    return vnp.sum(vnp.tanh(s))


def mean_reference_np(S, V):
    r, s = np.zeros(S.shape[1]), np.zeros(S.shape[1])
    for t in range(S.shape[0]):
        r_new = r + (S[t] - r) / (t + 1)
        s = s * np.exp(r - r_new) + V[t]
        r = r_new
    return np.sum(np.tanh(s))


def input_reference(S, V):
    """The reference is an input's rows: the coefficients exp(S[t-1] - S[t])."""
    s = V[0]
    for t in range(1, S.shape[0]):
        s = s * vnp.exp(S[t - 1] - S[t]) + V[t]
    return vnp.sum(s ** 2)


def input_reference_np(S, V):
    s = V[0]
    for t in range(1, S.shape[0]):
        s = s * np.exp(S[t - 1] - S[t]) + V[t]
    return np.sum(s ** 2)


def every_step_read(S, V):
    """Every step's state is read: the scan stays (and stays right)."""
    m, s, total = S[0], vnp.ones(S.shape[1]), 0.0
    for t in range(1, S.shape[0]):
        m_new = vnp.maximum(m, S[t])
        s = s * vnp.exp(m - m_new) + vnp.exp(S[t] - m_new)
        m = m_new
        total = total + vnp.sum(vnp.log(s) + m)
    return total


def every_step_read_np(S, V):
    m, s, total = S[0], np.ones(S.shape[1]), 0.0
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        s = s * np.exp(m - m_new) + np.exp(S[t] - m_new)
        m = m_new
        total += np.sum(np.log(s) + m)
    return total


def not_telescoping(S, V):
    """exp of a difference two rows apart: no telescoping, the scan stays."""
    s = V[0]
    for t in range(2, S.shape[0]):
        s = s * vnp.exp(S[t - 2] - S[t]) + V[t]
    return vnp.sum(s ** 2)


def not_telescoping_np(S, V):
    s = V[0]
    for t in range(2, S.shape[0]):
        s = s * np.exp(S[t - 2] - S[t]) + V[t]
    return np.sum(s ** 2)


def softmin_log(S, V):
    """An online soft minimum (m - log l), batching's first step peeled off the scan: the
    scan starts at a gather of the peeled row and the steady steps' rows."""
    m, l_ = S[0], vnp.ones(S.shape[1])
    for t in range(1, S.shape[0]):
        m_new = vnp.minimum(m, S[t])
        l_ = l_ * vnp.exp(m_new - m) + vnp.exp(m_new - S[t])
        m = m_new
    return vnp.sum(m - vnp.log(l_)) + vnp.sum(V[0])


def softmin_log_np(S, V):
    m, l_ = S[0], np.ones(S.shape[1])
    for t in range(1, S.shape[0]):
        m_new = np.minimum(m, S[t])
        l_, m = l_ * np.exp(m_new - m) + np.exp(m_new - S[t]), m_new
    return np.sum(m - np.log(l_)) + np.sum(V[0])


def lse_weighted(S, V):
    """A log-sum-exp with a running maximum weighting V's squares, the state's update in
    the other operand order (p + l * scale)."""
    m, l_ = S[0], V[0] ** 2
    for t in range(1, S.shape[0]):
        m_new = vnp.maximum(m, S[t])
        l_ = vnp.exp(S[t] - m_new) * V[t] ** 2 + l_ * vnp.exp(m - m_new)
        m = m_new
    return vnp.sum(m + vnp.log(l_ + 1e-3))


def lse_weighted_np(S, V):
    m, l_ = S[0], V[0] ** 2
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        l_, m = np.exp(S[t] - m_new) * V[t] ** 2 + l_ * np.exp(m - m_new), m_new
    return np.sum(m + np.log(l_ + 1e-3))


def lse_max(S, V):
    """An online log-sum-exp with a running maximum from the first row (its first step
    peeled off the scan as in softmin_log), times a learned scale."""
    m, s = S[0], vnp.ones(S.shape[1])
    for t in range(1, S.shape[0]):
        m_new = vnp.maximum(m, S[t])
        s = s * vnp.exp(m - m_new) + vnp.exp(S[t] - m_new)
        m = m_new
    return vnp.sum((m + vnp.log(s)) * V[0])


def lse_max_np(S, V):
    m, s = S[0], np.ones(S.shape[1])
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        s, m = s * np.exp(m - m_new) + np.exp(S[t] - m_new), m_new
    return np.sum((m + np.log(s)) * V[0])


ENDS = [online_softmax, min_reference, input_reference, softmin_log, lse_weighted, lse_max]
KEPT = [every_step_read, not_telescoping]
# (batching merges these programs' two exps into one over interleaved or windowed rows,
# which the coefficients' view chain does not follow yet (a stride-2 read of a split row
# axis, a take of strided windows): they stay scans, checked for values and gradients)
OTHER = [logsumexp_final, mean_reference]
REFS = {f: globals()[f.__name__ + "_np"] for f in ENDS + KEPT + OTHER}


def _args(T, d=4, seed=31):
    r = rng(seed)
    return r.standard_normal((T, d)), 0.5 * r.standard_normal((T, d))


def _simplified(f, args):
    with vg.config(keep_stages=True):
        e, _ = vg.jit(f).entry(*args)
    return prims(e.stages["simplify"])


@pytest.mark.parametrize("f", ENDS + KEPT + OTHER, ids=lambda f: f.__name__)
@pytest.mark.parametrize("T", [9, 40])
def test_values_and_gradients(f, T):
    check(f, _args(T), argnums=(0, 1), ref=REFS[f])


@pytest.mark.parametrize("f", ENDS, ids=lambda f: f.__name__)
def test_read_at_the_end_is_no_scan(f):
    found = _simplified(f, _args(40))
    assert "affine_scan" not in found and "loop" not in found, found


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_scan_stays_where_it_must(f):
    assert "affine_scan" in _simplified(f, _args(40))


def test_large_rescalings_stay_finite():
    """Inputs spread over hundreds: each weight exp(u_s - u_T) <= 1 where the terms
    exp(S - m) of the loop are; the result equals the loop's."""
    S, V = _args(60)
    S = S * 300.0
    np.testing.assert_allclose(vg.jit(online_softmax)(S, V), online_softmax_np(S, V),
                               rtol=1e-9)
