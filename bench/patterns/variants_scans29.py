"""Carries of session 29 (issue 14, item 6): sums kept relative to a running extreme, as users
write them. An online log-sum-exp from a -inf start, from the first row, far from zero, with a
temperature folded into the scores; an online soft minimum; weighted by data; kept in a dict
and in a tuple; online softmax-weighted means of value rows (a streaming attention pool) in a
dict and a tuple; a log-partition per row of a score matrix walked by columns; a streaming
log-mean-exp.

References are hand-vectorized NumPy as a user writes them (max, exp, sum along the axis);
never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}
_WIDE = {"small": {"n": 7, "d": 4}, "default": {"n": 400, "d": 96}}


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def _sv_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d)


def _far_inputs(rng, n, d):
    return (normal(rng, n, d) * 3.0 + 50.0,)


def lse_from_neg_inf(X):
    """Item 6: an online log-sum-exp whose running maximum starts at -inf and whose sum
    starts at zero (the first step's rescaling e^(-inf - x) = 0)."""
    m = vnp.full(X.shape[1], -np.inf)
    s = vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        m_new = np.maximum(m, X[t])
        s = s * np.exp(m - m_new) + np.exp(X[t] - m_new)
        m = m_new
    return np.sum(m + np.log(s))


def lse_from_neg_inf_ref(X):
    m = X.max(axis=0)
    return np.sum(m + np.log(np.exp(X - m).sum(axis=0)))


def lse_far_from_zero(X):
    """Item 6: an online log-sum-exp on data far from zero (offset 50), averaged over the
    channels."""
    m = X[0]
    s = vnp.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, X[t])
        s = s * np.exp(m - m_new) + np.exp(X[t] - m_new)
        m = m_new
    return np.sum(np.log(s) + m) / X.shape[1]


def lse_far_from_zero_ref(X):
    m = np.max(X, axis=0)
    return np.sum(np.log(np.sum(np.exp(X - m), axis=0)) + m) / X.shape[1]


def tempered_lse(X):
    """Item 6: an online log-sum-exp of scores scaled by a temperature computed first (the
    scores a new array, the loop over its rows)."""
    Z = X / 0.7
    m = Z[0]
    s = vnp.ones(X.shape[1])
    for t in range(1, Z.shape[0]):
        m_new = np.maximum(m, Z[t])
        s = s * np.exp(m - m_new) + np.exp(Z[t] - m_new)
        m = m_new
    return 0.7 * np.sum(m + np.log(s))


def tempered_lse_ref(X):
    Z = X / 0.7
    m = Z.max(axis=0)
    return 0.7 * np.sum(m + np.log(np.exp(Z - m).sum(axis=0)))


def soft_minimum(X):
    """Item 6: an online soft minimum (-log sum exp(-x)) with a running minimum, the state
    updated in the other operand order (p + l * scale)."""
    m = X[0]
    l_ = vnp.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.minimum(m, X[t])
        l_ = np.exp(m_new - X[t]) + l_ * np.exp(m_new - m)
        m = m_new
    return np.sum(m - np.log(l_))


def soft_minimum_ref(X):
    m = X.min(axis=0)
    return np.sum(m - np.log(np.exp(m - X).sum(axis=0)))


def weighted_lse(S, V):
    """Item 6: an online log-sum-exp whose terms carry positive weights V^2 + 1 (a weighted
    partition function), read through log at the end."""
    m = S[0]
    s = V[0] ** 2 + 1.0
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        s = s * np.exp(m - m_new) + np.exp(S[t] - m_new) * (V[t] ** 2 + 1.0)
        m = m_new
    return np.sum(m + np.log(s))


def weighted_lse_ref(S, V):
    m = S.max(axis=0)
    return np.sum(m + np.log(np.sum(np.exp(S - m) * (V ** 2 + 1.0), axis=0)))


def lse_dict_state(X):
    """Item 6: an online log-sum-exp kept in a dict {"max", "sum"}."""
    st = {"max": X[0], "sum": vnp.ones(X.shape[1])}
    for t in range(1, X.shape[0]):
        m_new = np.maximum(st["max"], X[t])
        st["sum"] = st["sum"] * np.exp(st["max"] - m_new) + np.exp(X[t] - m_new)
        st["max"] = m_new
    return np.sum(st["max"] + np.log(st["sum"]))


def lse_dict_state_ref(X):
    m = X.max(axis=0)
    return np.sum(m + np.log(np.exp(X - m).sum(axis=0)))


def log_mean_exp_stream(X):
    """Item 6: a streaming log-mean-exp (the log-sum-exp less log n), far from zero, the
    max and sum as a tuple."""
    state = (X[0], vnp.ones(X.shape[1]))
    for t in range(1, X.shape[0]):
        m, s = state
        m_new = np.maximum(m, X[t])
        state = (m_new, s * np.exp(m - m_new) + np.exp(X[t] - m_new))
    m, s = state
    return np.sum(m + np.log(s) - np.log(X.shape[0]))


def log_mean_exp_stream_ref(X):
    m = X.max(axis=0)
    return np.sum(m + np.log(np.exp(X - m).mean(axis=0)))


def row_log_partition(A):
    """Item 6: the log-partition of every row of a score matrix, walked column by column
    (the running maximum over columns, a vector over rows)."""
    m = A[:, 0]
    s = vnp.ones(A.shape[0])
    for j in range(1, A.shape[1]):
        m_new = np.maximum(m, A[:, j])
        s = s * np.exp(m - m_new) + np.exp(A[:, j] - m_new)
        m = m_new
    return np.sum(m + np.log(s))


def row_log_partition_ref(A):
    m = A.max(axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.exp(A - m).sum(axis=1)))


def _p(name, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, 6, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan", tags=("variant", "scans"))


def softmax_mean_dict(S, V):
    """Item 6: an online softmax-weighted mean of value rows (a streaming attention pool),
    the running maximum, normalizer and weighted sum kept in a dict."""
    st = {"m": S[0], "l": vnp.ones(S.shape[1]), "acc": V[0]}
    for t in range(1, S.shape[0]):
        m_new = np.maximum(st["m"], S[t])
        scale = np.exp(st["m"] - m_new)
        p = np.exp(S[t] - m_new)
        st = {"m": m_new, "l": st["l"] * scale + p, "acc": st["acc"] * scale + p * V[t]}
    return np.sum(st["acc"] / st["l"])


def softmax_mean_dict_ref(S, V):
    e = np.exp(S - S.max(axis=0))
    return np.sum((e * V).sum(axis=0) / e.sum(axis=0))


def attention_pool_tuple(S, V):
    """Item 6: the same pool as a (max, normalizer, sum) tuple, the values squared, and the
    log-normalizer read too."""
    m, l_, acc = S[0], vnp.ones(S.shape[1]), V[0] ** 2
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        scale = np.exp(m - m_new)
        p = np.exp(S[t] - m_new)
        m, l_, acc = m_new, l_ * scale + p, acc * scale + p * V[t] ** 2
    return np.sum(acc / l_) + np.sum(m + np.log(l_))


def attention_pool_tuple_ref(S, V):
    m = S.max(axis=0)
    e = np.exp(S - m)
    z = e.sum(axis=0)
    return np.sum((e * V ** 2).sum(axis=0) / z) + np.sum(m + np.log(z))


_COLS = {"small": {"n": 4, "d": 7}, "default": {"n": 96, "d": 400}}

PATTERNS = [
    _p("lse_from_neg_inf", _SEQ, (0,), _x_inputs),
    _p("lse_far_from_zero", _SEQ, (0,), _far_inputs),
    _p("tempered_lse", _SEQ, (0,), _x_inputs),
    _p("soft_minimum", _SEQ, (0,), _x_inputs),
    _p("weighted_lse", _SEQ, (0, 1), _sv_inputs),
    _p("lse_dict_state", _WIDE, (0,), _x_inputs),
    _p("log_mean_exp_stream", _SEQ, (0,), _far_inputs),
    _p("row_log_partition", _COLS, (0,), _x_inputs),
    _p("softmax_mean_dict", _SEQ, (0, 1), _sv_inputs),
    _p("attention_pool_tuple", _SEQ, (0, 1), _sv_inputs),
]
