"""Carries of session 25 (issue 14, item 6), in shapes the earlier carry variants lack:
scalar states kept as Python floats, tuples and dicts (a tuple update whose second filter
reads the first's old value; a learned coefficient; a running mean whose coefficient
t / (t + 1) changes every step; a bias correction; a scalar position and velocity; a running
product scaling a running sum; returns computed backwards; a buffer of floats written and read back), vector carries in a list (a
double exponential average), two carries feeding each other in either order, and running
extremes with rescaling (an online log-sum-exp of the negated scores: a running minimum).

References are hand-vectorized NumPy as a user writes them: cumulative sums, products and
extrema, closed forms P (c0 + cumsum(b / P)) and the 2x2 doubling scan of variants_scans;
never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform
from .variants_scans import _linrec, _matscan2

_LONG = {"small": {"n": 7}, "default": {"n": 4000}}
_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}


def _prev(c, c0=0.0):
    """[c0, c[0], ..., c[n-2]]: each step's carry before its update."""
    return np.concatenate([np.broadcast_to(c0, (1,) + c.shape[1:]), c[:-1]])


# ------------------------------------------------------------------ scalar states

def scalar_tuple_filters(x):
    """Item 6: two filters of a scalar series in one tuple assignment (the second reads the
    first's value before this step's update), their gap squared every step."""
    a, b = 0.0, 0.0
    total = 0.0
    for t in range(len(x)):
        a, b = 0.95 * a + x[t], 0.9 * b + 0.1 * a
        total = total + (a - b) ** 2
    return total


def scalar_tuple_filters_ref(x):
    a = _linrec(np.full(len(x), 0.95), x)
    b = _linrec(np.full(len(x), 0.9), 0.1 * _prev(a))
    return np.sum((a - b) ** 2)


def scalar_dict_learned(x, k):
    """Item 6: a low-pass filter with a learned coefficient k, kept in a dict of floats, and
    the high-pass residual (not carried) squared."""
    s = {"lo": 0.0}
    total = 0.0
    for t in range(len(x)):
        s["lo"] = k * s["lo"] + (1.0 - k) * x[t]
        hi = x[t] - s["lo"]
        total = total + hi * hi
    return total


def scalar_dict_learned_ref(x, k):
    lo = _linrec(np.full(len(x), k), (1.0 - k) * x)
    return np.sum((x - lo) ** 2)


def scalar_running_mean(x):
    """Item 6: a running mean in a float (m += (x - m) / (t + 1): a coefficient that changes
    every step) and each sample's squared deviation from the mean so far."""
    m = 0.0
    total = 0.0
    for t in range(len(x)):
        m = m + (x[t] - m) / (t + 1)
        total = total + (x[t] - m) ** 2
    return total


def scalar_running_mean_ref(x):
    m = np.cumsum(x) / np.arange(1, len(x) + 1)
    return np.sum((x - m) ** 2)


def scalar_bias_corrected(x):
    """Item 6: an exponential average in a float, bias-corrected by 1 - 0.9^(t+1) (a Python
    number per step), squared."""
    m = 0.0
    total = 0.0
    for t in range(len(x)):
        m = 0.9 * m + 0.1 * x[t]
        total = total + (m / (1.0 - 0.9 ** (t + 1))) ** 2
    return total


def scalar_bias_corrected_ref(x):
    m = _linrec(np.full(len(x), 0.9), 0.1 * x)
    return np.sum((m / (1.0 - 0.9 ** np.arange(1, len(x) + 1))) ** 2)


def scalar_product_sum(r, x):
    """Item 6: a running product of growth factors (a float) scaling what a running sum
    adds: the value of a stream of payments under compounding."""
    p, s = 1.0, 0.0
    for t in range(len(x)):
        p = p * r[t]
        s = s + p * x[t]
    return s * s + p


def scalar_product_sum_ref(r, x):
    p = np.cumprod(r)
    return np.sum(p * x) ** 2 + p[-1]


def scalar_reverse_returns(r):
    """Item 6: discounted returns of a scalar reward series computed backwards in a float."""
    g = 0.0
    total = 0.0
    for t in reversed(range(len(r))):
        g = r[t] + 0.99 * g
        total = total + g * g
    return total


def scalar_reverse_returns_ref(r):
    return np.sum(_linrec(np.full(len(r), 0.99), r[::-1]) ** 2)


def scalar_buffer_decay(x):
    """Item 6: a decay written into a buffer of floats element by element and read back one
    step later (y[t] = 0.9 y[t-1] + x[t]), the buffer's energy at the end."""
    y = vnp.zeros(len(x))
    y[0] = x[0]
    for t in range(1, len(x)):
        y[t] = 0.9 * y[t - 1] + x[t]
    return np.sum(y * y)


def scalar_buffer_decay_ref(x):
    return np.sum(_linrec(np.full(len(x), 0.9), x) ** 2)


def _series_inputs(rng, n):
    return (normal(rng, n),)


def _series_k_inputs(rng, n):
    return normal(rng, n), np.array(0.85)


def _growth_pay_inputs(rng, n):
    return uniform(rng, n, low=0.995, high=1.005), normal(rng, n)


# ------------------------------------------------------------------ vector carries

def double_ema_list(X):
    """Item 6: a double exponential average per channel, its two stages in a list of
    vectors (the second smooths the first's new value), the gap summed every step."""
    s = [vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])]
    total = 0.0
    for t in range(X.shape[0]):
        s[0] = 0.9 * s[0] + 0.1 * X[t]
        s[1] = 0.9 * s[1] + 0.1 * s[0]
        total = total + np.sum((s[0] - s[1]) ** 2)
    return total


def double_ema_list_ref(X):
    ones = np.full((X.shape[0], 1), 0.9)
    a = _linrec(ones, 0.1 * X)
    b = _linrec(ones, 0.1 * a)
    return np.sum((a - b) ** 2)


def velocity_reads_old_position(X):
    """Item 6: a damped oscillator per channel, the position moved first and the velocity
    then reading the new position (the opposite order of position_after_velocity)."""
    p = vnp.zeros(X.shape[1])
    v = vnp.zeros(X.shape[1])
    loss = 0.0
    for t in range(X.shape[0]):
        p = p + 0.1 * v
        v = 0.95 * v - 0.1 * p + X[t]
        loss = loss + np.sum(p ** 2)
    return loss


def velocity_reads_old_position_ref(X):
    # (p, v)_t = M (p, v)_{t-1} + (0, x_t) with M = [[1, 0.1], [-0.1, 0.95 - 0.01]]
    M = np.array([[1.0, 0.1], [-0.1, 0.94]])
    B = np.stack([np.zeros_like(X), X], axis=1)
    c = _matscan2(M, B, np.zeros((2, X.shape[1])))
    return np.sum(c[:, 0] ** 2)


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


# ------------------------------------------------------------------ extremes with rescaling

def online_softmin(S):
    """Item 6: an online log-sum-exp of the negated scores down each column: the running
    minimum and the sum rescaled by it (m = min(m, s); l = l e^(m - m_old) + e^(m - s)),
    the soft minimum m - log(l) at the end."""
    m = S[0]
    l_ = vnp.ones(S.shape[1])
    for t in range(1, S.shape[0]):
        m_new = np.minimum(m, S[t])
        l_ = l_ * np.exp(m_new - m) + np.exp(m_new - S[t])
        m = m_new
    return np.sum(m - np.log(l_))


def online_softmin_ref(S):
    m = S.min(axis=0)
    return np.sum(m - np.log(np.sum(np.exp(m - S), axis=0)))


def drawup_rescaled(P):
    """Item 6: a running maximum of prices per channel and every step's price relative to it
    (a carry read by per-step work), summed."""
    peak = P[0]
    total = 0.0
    for t in range(1, P.shape[0]):
        peak = np.maximum(peak, P[t])
        total = total + np.sum(P[t] / peak)
    return total


def drawup_rescaled_ref(P):
    return np.sum(P[1:] / np.maximum.accumulate(P, axis=0)[1:])


def _prices_inputs(rng, n, d):
    return (np.cumsum(normal(rng, n, d, scale=0.01), axis=0) + 2.0,)


# ------------------------------------------------------------------------------- the suite

def _p(name, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, 6, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan", tags=("variant", "scans"))


PATTERNS = [
    _p("scalar_tuple_filters", _LONG, (0,), _series_inputs),
    _p("scalar_dict_learned", _LONG, (0, 1), _series_k_inputs),
    _p("scalar_running_mean", _LONG, (0,), _series_inputs),
    _p("scalar_bias_corrected", _LONG, (0,), _series_inputs),
    _p("scalar_product_sum", _LONG, (0, 1), _growth_pay_inputs),
    _p("scalar_reverse_returns", _LONG, (0,), _series_inputs),
    _p("scalar_buffer_decay", _LONG, (0,), _series_inputs),
    _p("double_ema_list", _SEQ, (0,), _x_inputs),
    _p("velocity_reads_old_position", _SEQ, (0,), _x_inputs),
    _p("online_softmin", _SEQ, (0,), _x_inputs),
    _p("drawup_rescaled", _SEQ, (0,), _prices_inputs),
]
