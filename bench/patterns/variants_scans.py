"""Natural variants of loops that carry state (issue 14, item 6), in styles the suite lacked:
a scalar Kalman filter with a steady-state gain, AR(2) processes (two tuple carries and a
buffer read two steps back), a leaky integrate-and-fire neuron without reset, Adam's two
moments over a Python list of gradients, Holt's linear trend (level and trend carries, fully
coupled), a running covariance of two series, an exponentially weighted variance, cumulative
products of clipped growth factors, discounted returns with a done mask, a running
log-sum-exp, momentum with a Nesterov look-ahead, two coupled damped oscillators (a 2x2
rotation), carries kept in a dict and in a Python list of floats, and a bias-corrected moving
average.

Each has a hand-vectorized NumPy reference as a user writes one: cumulative sums, products
and maxima, closed forms c = P (c0 + cumsum(b / P)) where the cumulative product P stays in
range, `np.logaddexp.accumulate`, and for the fully coupled linear systems a log-depth
doubling scan over 2x2 matrices (`_matscan2`), never a Python loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform

_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}
_LONG = {"small": {"n": 7}, "default": {"n": 4000}}


def _linrec(a, b, init=0.0):
    """c[t] = a[t] * c[t-1] + b[t] (c[-1] = init) in closed form, P the cumulative product of
    a (in range at the sizes used here)."""
    P = np.cumprod(a, axis=0)
    return P * (init + np.cumsum(b / P, axis=0))


def _matscan2(M, B, c0):
    """c[t] = M @ c[t-1] + B[t] for 2-vectors (each trailing channel its own system) by
    doubling: after the round of width k, (A[t], b[t]) composes the min(2k, t + 1) steps
    ending at t. M: (2, 2) constants; B: (T, 2, d); c0: (2, d). Returns (T, 2, d)."""
    T = B.shape[0]
    a = [[np.full(B.shape[:1] + B.shape[2:], float(M[i][j])) for j in range(2)]
         for i in range(2)]
    b = [B[:, 0].copy(), B[:, 1].copy()]
    k = 1
    while k < T:  # (A2, b2) after (A1, b1): A2 A1, A2 b1 + b2, on the rows k and later
        a00, a01, a10, a11 = (a[i][j][:-k] for i in range(2) for j in range(2))
        u00, u01, u10, u11 = (a[i][j][k:] for i in range(2) for j in range(2))
        b0, b1 = b[0][:-k], b[1][:-k]
        nb0 = u00 * b0 + u01 * b1 + b[0][k:]
        nb1 = u10 * b0 + u11 * b1 + b[1][k:]
        n00, n01 = u00 * a00 + u01 * a10, u00 * a01 + u01 * a11
        n10, n11 = u10 * a00 + u11 * a10, u10 * a01 + u11 * a11
        b[0][k:], b[1][k:] = nb0, nb1
        a[0][0][k:], a[0][1][k:], a[1][0][k:], a[1][1][k:] = n00, n01, n10, n11
        k *= 2
    return np.stack([a[0][0] * c0[0] + a[0][1] * c0[1] + b[0],
                     a[1][0] * c0[0] + a[1][1] * c0[1] + b[1]], axis=1)


# ------------------------------------------------------------------ filters and processes

def kalman_steady_gain(Z, k):
    """Item 6: A scalar Kalman filter per channel at its steady-state gain k (a vector): predict with
    F = 0.95, correct by the innovation, and penalize every innovation and the filtered
    state's departure from the measurement."""
    x = vnp.zeros(Z.shape[1])
    loss = 0.0
    for t in range(Z.shape[0]):
        pred = 0.95 * x
        innov = Z[t] - pred
        x = pred + k * innov
        loss = loss + np.sum(innov ** 2) + 0.1 * np.sum((x - Z[t]) ** 2)
    return loss


def kalman_steady_gain_ref(Z, k):
    x = _linrec(np.broadcast_to(0.95 * (1 - k), Z.shape), k * Z)
    prev = np.concatenate([np.zeros((1, Z.shape[1])), x[:-1]])
    return np.sum((Z - 0.95 * prev) ** 2) + 0.1 * np.sum((x - Z) ** 2)


def _zk_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, d, low=0.02, high=0.08)


def ar2_tuple(E):
    """Item 6: An AR(2) process per channel driven by E, its two lags carried as a tuple
    (y1, y2 = a1 y1 + a2 y2 + e, y1), and the squared path summed."""
    y1 = vnp.zeros(E.shape[1])
    y2 = vnp.zeros(E.shape[1])
    total = 0.0
    for t in range(E.shape[0]):
        y1, y2 = 0.5 * y1 + 0.3 * y2 + E[t], y1
        total = total + np.sum(y1 ** 2)
    return total


def ar2_tuple_ref(E):
    M = np.array([[0.5, 0.3], [1.0, 0.0]])
    B = np.stack([E, np.zeros_like(E)], axis=1)
    y = _matscan2(M, B, np.zeros((2, E.shape[1])))
    return np.sum(y[:, 0] ** 2)


def ar2_buffer(E):
    """Item 6: An AR(2) process written into a buffer, y[t] = 0.6 y[t-1] - 0.2 y[t-2] + e[t], read
    two steps back, then a squared loss on the whole buffer."""
    n = E.shape[0]
    y = vnp.zeros_like(E)
    y[0] = E[0]
    y[1] = 0.6 * y[0] + E[1]
    for t in range(2, n):
        y[t] = 0.6 * y[t - 1] - 0.2 * y[t - 2] + E[t]
    return np.sum(y ** 2)


def ar2_buffer_ref(E):
    M = np.array([[0.6, -0.2], [1.0, 0.0]])
    B = np.stack([E, np.zeros_like(E)], axis=1)
    y = _matscan2(M, B, np.zeros((2, E.shape[1])))
    return np.sum(y[:, 0] ** 2)


def lif_no_reset(I, w):
    """Item 6: A leaky integrate-and-fire membrane per neuron without reset (v += dt (-v / tau +
    w I[t])), with a smooth spike count (a logistic of v - threshold) summed."""
    v = vnp.zeros(I.shape[1])
    rate = 0.0
    for t in range(I.shape[0]):
        v = v + 0.1 * (-v / 2.0 + w * I[t])
        rate = rate + np.sum(1.0 / (1.0 + np.exp(-(v - 0.5) * 4.0)))
    return rate


def lif_no_reset_ref(I, w):
    v = _linrec(np.full((I.shape[0], 1), 0.95), 0.1 * w * I)
    return np.sum(1.0 / (1.0 + np.exp(-(v - 0.5) * 4.0)))


def _iw_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, d, low=0.5, high=1.5)


def adam_grad_list(p0, grads):
    """Item 6: Adam's two bias-corrected moments over a Python list of given gradients, moving p."""
    m = vnp.zeros_like(p0)
    v = vnp.zeros_like(p0)
    p = p0
    for t, g in enumerate(grads, start=1):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        mhat = m / (1 - 0.9 ** t)
        vhat = v / (1 - 0.999 ** t)
        p = p - 1e-2 * mhat / (np.sqrt(vhat) + 1e-8)
    return np.sum(p ** 2)


def adam_grad_list_ref(p0, grads):
    G = np.stack(grads)
    n = G.shape[0]
    t = np.arange(1, n + 1)[:, None]
    m = _linrec(np.full((n, 1), 0.9), 0.1 * G)
    v = _linrec(np.full((n, 1), 0.999), 0.001 * G * G)
    step = (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return np.sum((p0 - 1e-2 * np.sum(step, axis=0)) ** 2)


def _adam_inputs(rng, n, d):
    G = normal(rng, n, d)
    return normal(rng, d), [G[t] for t in range(n)]


def holt_linear_trend(X):
    """Item 6: Holt's linear trend per channel: a level and a trend carry updated together (fully
    coupled), and the squared one-step forecast errors summed."""
    alpha, beta = 0.3, 0.1
    level = X[0]
    trend = vnp.zeros(X.shape[1])
    sse = 0.0
    for t in range(1, X.shape[0]):
        forecast = level + trend
        sse = sse + np.sum((X[t] - forecast) ** 2)
        new_level = alpha * X[t] + (1 - alpha) * forecast
        trend = beta * (new_level - level) + (1 - beta) * trend
        level = new_level
    return sse


def holt_linear_trend_ref(X):
    a, b = 0.3, 0.1
    M = np.array([[1 - a, 1 - a], [-a * b, b * (1 - a) + 1 - b]])
    x = X[1:]
    B = np.stack([a * x, a * b * x], axis=1)
    c0 = np.stack([X[0], np.zeros(X.shape[1])])
    c = _matscan2(M, B, c0)
    prev = np.concatenate([c0[None], c[:-1]])
    return np.sum((x - prev[:, 0] - prev[:, 1]) ** 2)


def coupled_oscillators(U):
    """Item 6: Two coupled damped oscillators per channel, x and y rotated by a fixed angle each step
    (a 2x2 rotation times 0.99) and driven by U; the energy summed over the steps."""
    c, s = 0.99 * np.cos(0.1), 0.99 * np.sin(0.1)
    x = vnp.zeros(U.shape[1])
    y = vnp.zeros(U.shape[1])
    energy = 0.0
    for t in range(U.shape[0]):
        x, y = c * x - s * y + U[t], s * x + c * y
        energy = energy + np.sum(x * x + y * y)
    return energy


def coupled_oscillators_ref(U):
    c, s = 0.99 * np.cos(0.1), 0.99 * np.sin(0.1)
    M = np.array([[c, -s], [s, c]])
    B = np.stack([U, np.zeros_like(U)], axis=1)
    z = _matscan2(M, B, np.zeros((2, U.shape[1])))
    return np.sum(z ** 2)


# ------------------------------------------------------------------ running statistics

def running_covariance(X, Y):
    """Item 6: The running co-moment of two series per channel (Welford's update for a covariance:
    three carries, the co-moment reading both means before and after), then the sample
    covariance and the means."""
    mx = vnp.zeros(X.shape[1])
    my = vnp.zeros(X.shape[1])
    cxy = vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx = X[t] - mx
        mx = mx + dx / (t + 1)
        my = my + (Y[t] - my) / (t + 1)
        cxy = cxy + dx * (Y[t] - my)
    return np.sum(cxy / (X.shape[0] - 1)) + np.sum(mx * my)


def running_covariance_ref(X, Y):
    mx, my = X.mean(axis=0), Y.mean(axis=0)
    return np.sum(np.sum((X - mx) * (Y - my), axis=0) / (X.shape[0] - 1)) + np.sum(mx * my)


def ew_variance(X):
    """Item 6: An exponentially weighted variance per channel from the moving averages of x and of
    x^2 (two independent carries), its square root summed at every step."""
    a = 0.95
    m = X[0]
    s2 = X[0] ** 2
    total = 0.0
    for t in range(1, X.shape[0]):
        m = a * m + (1 - a) * X[t]
        s2 = a * s2 + (1 - a) * X[t] ** 2
        total = total + np.sum(np.sqrt(s2 - m * m + 1e-3))
    return total


def ew_variance_ref(X):
    a = 0.95
    n = X.shape[0] - 1
    ones = np.full((n, 1), a)
    m = _linrec(ones, (1 - a) * X[1:], X[0])
    s2 = _linrec(ones, (1 - a) * X[1:] ** 2, X[0] ** 2)
    return np.sum(np.sqrt(s2 - m * m + 1e-3))


def clipped_growth(R):
    """Item 6: Wealth compounding by clipped growth factors per channel (w *= clip(r, 0.9, 1.1)),
    with the log-wealth of every step summed."""
    w = vnp.ones(R.shape[1])
    total = 0.0
    for t in range(R.shape[0]):
        w = w * np.clip(R[t], 0.9, 1.1)
        total = total + np.sum(w)
    return total


def clipped_growth_ref(R):
    return np.sum(np.cumprod(np.clip(R, 0.9, 1.1), axis=0))


def _growth_inputs(rng, n, d):
    return (uniform(rng, n, d, low=0.85, high=1.15),)


def discounted_done_returns(R, done):
    """Item 6: Discounted returns computed backwards with a done mask (an episode ends where done is
    1), G = r + gamma G (1 - done), and the squared returns summed."""
    G = vnp.zeros(R.shape[1])
    total = 0.0
    for t in range(R.shape[0] - 1, -1, -1):
        G = R[t] + 0.99 * G * (1.0 - done[t])
        total = total + np.sum(G ** 2)
    return total


def discounted_done_returns_ref(R, done):
    # within an episode, G[t] = 0.99^-t * (sum over s >= t of 0.99^s r[s]) up to its end
    n = R.shape[0]
    t = np.arange(n)[:, None]
    disc = 0.99 ** t
    w = disc * R
    tail = np.cumsum(w[::-1], axis=0)[::-1]  # sum over s >= t
    # the first step after the episode that holds t: one past the next done at or after t
    nxt = np.where(done > 0, t, n)
    end = np.minimum.accumulate(nxt[::-1], axis=0)[::-1] + 1
    after = np.concatenate([tail, np.zeros((1, R.shape[1]))])
    Gv = (tail - np.take_along_axis(after, np.minimum(end, n), axis=0)) / disc
    return np.sum(Gv ** 2)


def _rd_inputs(rng, n, d):
    done = (rng.uniform(size=(n, d)) < 0.02).astype(np.float64)
    return normal(rng, n, d), done


def running_logsumexp(X):
    """Item 6: A running log-sum-exp per channel kept stable by its running maximum (m = max(m, x);
    s = s e^(m_old - m) + e^(x - m)), and log-sum-exp of every prefix summed."""
    m = X[0]
    s = vnp.ones(X.shape[1])
    total = np.sum(m)
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, X[t])
        s = s * np.exp(m - m_new) + np.exp(X[t] - m_new)
        m = m_new
        total = total + np.sum(m + np.log(s))
    return total


def running_logsumexp_ref(X):
    return np.sum(np.logaddexp.accumulate(X, axis=0))


def nesterov_path(p0, G):
    """Item 6: Momentum with a Nesterov look-ahead over given gradients (v = mu v - lr g; p += mu v -
    lr g), and the squared norm of every iterate."""
    v = vnp.zeros_like(p0)
    p = p0
    loss = 0.0
    for t in range(G.shape[0]):
        v = 0.9 * v - 0.01 * G[t]
        p = p + 0.9 * v - 0.01 * G[t]
        loss = loss + np.sum(p ** 2)
    return loss


def nesterov_path_ref(p0, G):
    v = _linrec(np.full((G.shape[0], 1), 0.9), -0.01 * G)
    p = p0 + np.cumsum(0.9 * v - 0.01 * G, axis=0)
    return np.sum(p ** 2)


def _path_inputs(rng, n, d):
    return normal(rng, d), normal(rng, n, d)


def dict_state_ema(X):
    """Item 6: Carries kept in a dict: a moving mean and a moving mean absolute deviation from it,
    the state read back each step and the deviation scores summed."""
    state = {"mean": vnp.zeros(X.shape[1]), "mad": vnp.ones(X.shape[1])}
    score = 0.0
    for t in range(X.shape[0]):
        dev = X[t] - state["mean"]
        score = score + np.sum(dev ** 2 / state["mad"])
        state["mean"] = 0.9 * state["mean"] + 0.1 * X[t]
        state["mad"] = 0.9 * state["mad"] + 0.1 * np.abs(dev)
    return score


def dict_state_ema_ref(X):
    n = X.shape[0]
    a = np.full((n, 1), 0.9)
    mean = _linrec(a, 0.1 * X)
    prev = np.concatenate([np.zeros((1, X.shape[1])), mean[:-1]])
    dev = X - prev
    mad = _linrec(a, 0.1 * np.abs(dev), 1.0)
    mad_prev = np.concatenate([np.ones((1, X.shape[1])), mad[:-1]])
    return np.sum(dev ** 2 / mad_prev)


def list_float_cascade(x):
    """Item 6: Three filters in cascade over a scalar series, their states kept in a Python list of
    floats: a leaky integrator, a second stage smoothing it, and a running sum of the
    second, squared at every step."""
    s = [0.0, 0.0, 0.0]
    total = 0.0
    for t in range(len(x)):
        s[0] = 0.9 * s[0] + x[t]
        s[1] = 0.85 * s[1] + 0.15 * s[0]
        s[2] = s[2] + 0.01 * s[1]
        total = total + s[2] * s[2]
    return total


def list_float_cascade_ref(x):
    n = len(x)
    s0 = _linrec(np.full(n, 0.9), x)
    s1 = _linrec(np.full(n, 0.85), 0.15 * s0)
    s2 = np.cumsum(0.01 * s1)
    return np.sum(s2 * s2)


def _series_inputs(rng, n):
    return (normal(rng, n),)


def bias_corrected_ema(X, w):
    """Item 6: A moving average with Adam's bias correction (m / (1 - b^t)), read every step against
    the next value: a prediction loss weighted per channel."""
    m = vnp.zeros(X.shape[1])
    loss = 0.0
    for t in range(X.shape[0] - 1):
        m = 0.9 * m + 0.1 * X[t]
        pred = m / (1 - 0.9 ** (t + 1))
        loss = loss + np.sum(w * (X[t + 1] - pred) ** 2)
    return loss


def bias_corrected_ema_ref(X, w):
    n = X.shape[0] - 1
    m = _linrec(np.full((n, 1), 0.9), 0.1 * X[:-1])
    pred = m / (1 - 0.9 ** np.arange(1, n + 1))[:, None]
    return np.sum(w * (X[1:] - pred) ** 2)


def _xw_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, d, low=0.5, high=1.5)


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def _xy_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d)


# ------------------------------------------------------------------------------- the suite

def _p(name, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, 6, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan", tags=("variant", "scans"))


PATTERNS = [
    _p("kalman_steady_gain", _SEQ, (0, 1), _zk_inputs),
    _p("ar2_tuple", _SEQ, (0,), _x_inputs),
    _p("ar2_buffer", _SEQ, (0,), _x_inputs),
    _p("lif_no_reset", _SEQ, (0, 1), _iw_inputs),
    _p("adam_grad_list", _SEQ, (0, 1), _adam_inputs),
    _p("holt_linear_trend", _SEQ, (0,), _x_inputs),
    _p("coupled_oscillators", _SEQ, (0,), _x_inputs),
    _p("running_covariance", _SEQ, (0, 1), _xy_inputs),
    _p("ew_variance", _SEQ, (0,), _x_inputs),
    _p("clipped_growth", _SEQ, (0,), _growth_inputs),
    _p("discounted_done_returns", _SEQ, (0,), _rd_inputs),
    _p("running_logsumexp", _SEQ, (0,), _x_inputs),
    _p("nesterov_path", _SEQ, (0, 1), _path_inputs),
    _p("dict_state_ema", _SEQ, (0,), _x_inputs),
    _p("list_float_cascade", _LONG, (0,), _series_inputs),
    _p("bias_corrected_ema", _SEQ, (0, 1), _xw_inputs),
]
