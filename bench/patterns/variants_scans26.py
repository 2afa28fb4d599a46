"""Carries of session 26 (issue 14, item 6): running extremes and moments as users write them.
Two extremes side by side (a running range), an extreme feeding a filter, an extreme of a
quantity that reads another extreme (the deepest drawdown so far), a decayed peak detector
(max(a m, x): no cumsum or cummax computes it directly), running moments kept in a dict (Welford's
update in its two textbook orders, with data far from zero), a running mean from a
(count, total) tuple, an online log-sum-exp with a running maximum, states appended to a
list and stacked, per-channel compounding, and sums of squares kept beside the sums.

References are hand-vectorized NumPy as a user writes them: cumulative sums, products and
extrema, np.var, closed forms; never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform
from .variants_scans import _linrec

_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}
_WIDE = {"small": {"n": 7, "d": 4}, "default": {"n": 500, "d": 64}}


def _steps(n, shape_tail=1):
    return np.arange(1, n + 1, dtype=np.float64).reshape((n,) + (1,) * shape_tail)


# ------------------------------------------------------------------ running extremes

def running_range(X):
    """Item 6: the running maximum and minimum of each channel (two independent extremes)
    and the range between them summed over the steps."""
    hi = X[0]
    lo = X[0]
    total = 0.0
    for t in range(1, X.shape[0]):
        hi = np.maximum(hi, X[t])
        lo = np.minimum(lo, X[t])
        total = total + np.sum(hi - lo)
    return total


def running_range_ref(X):
    r = np.maximum.accumulate(X, axis=0) - np.minimum.accumulate(X, axis=0)
    return np.sum(r[1:])


def peak_ema(X):
    """Item 6: a running maximum feeding an exponential average (one carry feeding another),
    the average squared at every step."""
    peak = X[0]
    e = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        peak = np.maximum(peak, X[t])
        e = 0.9 * e + 0.1 * peak
        total = total + np.sum(e ** 2)
    return total


def peak_ema_ref(X):
    peak = np.maximum.accumulate(X, axis=0)
    e = _linrec(np.full((X.shape[0], 1), 0.9), 0.1 * peak)
    return np.sum(e ** 2)


def deepest_drawdown(P):
    """Item 6: the drawdown below the running peak, summed, and the deepest drawdown (a
    running extreme of a value that reads another extreme) at the end."""
    peak = P[0]
    worst = vnp.zeros(P.shape[1])
    total = 0.0
    for t in range(P.shape[0]):
        peak = np.maximum(peak, P[t])
        dd = (peak - P[t]) / peak
        worst = np.maximum(worst, dd)
        total = total + np.sum(dd)
    return total + np.sum(worst)


def deepest_drawdown_ref(P):
    peak = np.maximum.accumulate(P, axis=0)
    dd = (peak - P) / peak
    return np.sum(dd) + np.sum(np.max(dd, axis=0))


def decayed_peak(X):
    """Item 6: a peak detector whose held value decays (m = max(0.99 m, x)): a max-plus
    linear recurrence, summed at every step."""
    m = X[0]
    total = 0.0
    for t in range(1, X.shape[0]):
        m = np.maximum(0.99 * m, X[t])
        total = total + np.sum(m)
    return total


def decayed_peak_ref(X):
    # m[t] = max_s 0.99^(t-s) x[s] = 0.99^t max_s (x[s] / 0.99^s): a positive scale keeps
    # the order, so a running maximum of rescaled samples (in range: 0.99^-1000 = 2.3e4)
    w = 0.99 ** np.arange(X.shape[0])[:, None]
    m = w * np.maximum.accumulate(X / w, axis=0)
    return np.sum(m[1:])


def online_logsumexp(X):
    """Item 6: an online log-sum-exp down each column with a running maximum (the sum
    rescaled by exp(m_old - m_new) whenever the maximum moves), m + log(s) at the end."""
    m = X[0]
    s = vnp.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, X[t])
        s = s * np.exp(m - m_new) + np.exp(X[t] - m_new)
        m = m_new
    return np.sum(m + np.log(s))


def online_logsumexp_ref(X):
    m = X.max(axis=0)
    return np.sum(m + np.log(np.sum(np.exp(X - m), axis=0)))


# ------------------------------------------------------------------ running moments

def welford_dict(X):
    """Item 6: Welford's running mean and squared deviations kept in a dict with the count
    (delta from the old mean, the sum reading the new one), on data far from zero."""
    st = {"n": 0, "mean": vnp.zeros(X.shape[1]), "m2": vnp.zeros(X.shape[1])}
    for t in range(X.shape[0]):
        st["n"] += 1
        delta = X[t] - st["mean"]
        st["mean"] = st["mean"] + delta / st["n"]
        st["m2"] = st["m2"] + delta * (X[t] - st["mean"])
    return np.sum(st["m2"] / st["n"]) + 1e-3 * np.sum(st["mean"])


def welford_dict_ref(X):
    return np.sum(np.var(X, axis=0)) + 1e-3 * np.sum(np.mean(X, axis=0))


def welford_squared_first(X):
    """Item 6: Welford's update in the other textbook order: the squared deviations first,
    from the old mean (m2 += t / (t + 1) delta^2), then the mean; and the running variance
    summed at every step."""
    mean = vnp.zeros(X.shape[1])
    m2 = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        delta = X[t] - mean
        m2 = m2 + delta * delta * (t / (t + 1))
        mean = mean + delta / (t + 1)
        total = total + np.sum(m2) / (t + 1)
    return total


def welford_squared_first_ref(X):
    n = _steps(X.shape[0])
    mean = np.cumsum(X, axis=0) / n
    m2 = np.cumsum((X - mean) * (X - np.concatenate([np.zeros((1, X.shape[1])), mean[:-1]])),
                   axis=0)
    return np.sum(m2 / n)


def mean_from_count_total(X):
    """Item 6: a running mean from a (count, total) tuple carry, each step's squared gap to
    the mean so far."""
    acc = (0, vnp.zeros(X.shape[1]))
    total = 0.0
    for t in range(X.shape[0]):
        acc = (acc[0] + 1, acc[1] + X[t])
        mean = acc[1] / acc[0]
        total = total + np.sum((X[t] - mean) ** 2)
    return total


def mean_from_count_total_ref(X):
    mean = np.cumsum(X, axis=0) / _steps(X.shape[0])
    return np.sum((X - mean) ** 2)


def sums_and_squares(X):
    """Item 6: the running sum and sum of squares as two carries and the running standard
    deviation from them (the user's own formula, data near zero), summed."""
    s = vnp.zeros(X.shape[1])
    s2 = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        s = s + X[t]
        s2 = s2 + X[t] ** 2
        n = t + 1
        total = total + np.sum(np.sqrt(s2 / n - (s / n) ** 2 + 1e-2))
    return total


def sums_and_squares_ref(X):
    n = _steps(X.shape[0])
    s, s2 = np.cumsum(X, axis=0), np.cumsum(X ** 2, axis=0)
    return np.sum(np.sqrt(s2 / n - (s / n) ** 2 + 1e-2))


# ------------------------------------------------------------------ states kept in lists

def states_appended(X):
    """Item 6: running totals appended to a list (states[-1] + x), stacked after the loop
    and weighted by their step."""
    states = [vnp.zeros(X.shape[1])]
    for t in range(X.shape[0]):
        states.append(states[-1] + X[t])
    S = np.stack(states[1:])
    return np.sum(S * np.arange(X.shape[0])[:, None] / X.shape[0])


def states_appended_ref(X):
    return np.sum(np.cumsum(X, axis=0) * np.arange(X.shape[0])[:, None] / X.shape[0])


def compounding_channels(R):
    """Item 6: per-channel wealth compounding by growth rates (w = w * (1 + r)), its log
    summed at every step."""
    w = vnp.ones(R.shape[1])
    total = 0.0
    for t in range(R.shape[0]):
        w = w * (1.0 + R[t])
        total = total + np.sum(np.log(w))
    return total


def compounding_channels_ref(R):
    return np.sum(np.log(np.cumprod(1.0 + R, axis=0)))


# ------------------------------------------------------------------ inputs

def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def _offset_inputs(rng, n, d):
    return (normal(rng, n, d) + 1e4,)


def _prices_inputs(rng, n, d):
    return (np.cumsum(normal(rng, n, d, scale=0.01), axis=0) + 2.0,)


def _rates_inputs(rng, n, d):
    return (uniform(rng, n, d, low=-0.01, high=0.012),)


# ------------------------------------------------------------------------------- the suite

def _p(name, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, 6, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan", tags=("variant", "scans"))


PATTERNS = [
    _p("running_range", _SEQ, (0,), _x_inputs),
    _p("peak_ema", _SEQ, (0,), _x_inputs),
    _p("deepest_drawdown", _SEQ, (0,), _prices_inputs),
    _p("decayed_peak", _SEQ, (0,), _x_inputs),
    _p("online_logsumexp", _SEQ, (0,), _x_inputs),
    _p("welford_dict", _SEQ, (0,), _offset_inputs),
    _p("welford_squared_first", _SEQ, (0,), _x_inputs),
    _p("mean_from_count_total", _WIDE, (0,), _x_inputs),
    _p("sums_and_squares", _SEQ, (0,), _x_inputs),
    _p("states_appended", _WIDE, (0,), _x_inputs),
    _p("compounding_channels", _WIDE, (0,), _rates_inputs),
]
