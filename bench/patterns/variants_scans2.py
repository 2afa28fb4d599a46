"""More loops that carry state (issue 14, item 6), in shapes the earlier carry variants lack:
the loss read before the update and after it, a carry read back from a buffer one and two
steps later, a matrix-shaped state, two carries feeding each other (one's product scaling
the other's sum; a swap; position and velocity updated in either order; momentum with
weight decay, the parameter feeding the velocity), a scan over a scan's output (a forward
then backward smoother; a sum of prefix sums), a running minimum read by a sum, and a
cumulative hazard.

References are hand-vectorized NumPy as a user writes them: cumulative sums, products and
minima, closed forms P (c0 + cumsum(b / P)) where P stays in range, and the log-depth 2x2
doubling scan of variants_scans for the fully coupled systems; never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform
from .variants_scans import _linrec, _matscan2

_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}


def _prev(c, c0):
    """[c0, c[0], ..., c[n-2]]: each step's carry before its update."""
    return np.concatenate([np.broadcast_to(c0, (1,) + c.shape[1:]), c[:-1]])


# ------------------------------------------------------------------ update order

def error_before_update(X, w):
    """Item 6: a moving average scored against each value before it absorbs it (the loss
    reads the old carry), weighted per channel."""
    m = vnp.zeros(X.shape[1])
    loss = 0.0
    for t in range(X.shape[0]):
        loss = loss + np.sum(w * (X[t] - m) ** 2)
        m = 0.8 * m + 0.2 * X[t]
    return loss


def error_before_update_ref(X, w):
    m = _linrec(np.full((X.shape[0], 1), 0.8), 0.2 * X)
    return np.sum(w * (X - _prev(m, 0.0)) ** 2)


def position_after_velocity(X0, F):
    """Item 6: a semi-implicit Euler step (the velocity first, the position reads the new
    velocity) of a damped spring per channel, driven by F; the squared path summed."""
    x = X0
    v = vnp.zeros(X0.shape)
    total = 0.0
    for t in range(F.shape[0]):
        v = 0.98 * v - 0.05 * x + 0.1 * F[t]
        x = x + 0.1 * v
        total = total + np.sum(x ** 2)
    return total


def position_after_velocity_ref(X0, F):
    # (x, v)' = M (x, v) + (0.01 F, 0.1 F): x' = x + 0.1 v' = 0.995 x + 0.098 v + 0.01 F
    M = np.array([[1 - 0.005, 0.098], [-0.05, 0.98]])
    B = np.stack([0.01 * F, 0.1 * F], axis=1)
    c = _matscan2(M, B, np.stack([X0, np.zeros_like(X0)]))
    return np.sum(c[:, 0] ** 2)


def position_before_velocity(X0, F):
    """Item 6: the explicit Euler step of the same spring (the position reads the old
    velocity), as a tuple assignment."""
    x = X0
    v = vnp.zeros(X0.shape)
    total = 0.0
    for t in range(F.shape[0]):
        x, v = x + 0.1 * v, 0.98 * v - 0.05 * x + 0.1 * F[t]
        total = total + np.sum(x ** 2)
    return total


def position_before_velocity_ref(X0, F):
    M = np.array([[1.0, 0.1], [-0.05, 0.98]])
    B = np.stack([np.zeros_like(F), 0.1 * F], axis=1)
    c = _matscan2(M, B, np.stack([X0, np.zeros_like(X0)]))
    return np.sum(c[:, 0] ** 2)


def _spring_inputs(rng, n, d):
    return normal(rng, d), normal(rng, n, d)


# ------------------------------------------------------------------ carries feeding each other

def scaled_sum_of_products(R, X):
    """Item 6: a running product of growth factors scaling what a running sum adds (the
    sum reads the product's old value): a cumprod, then a cumsum of its shifted rows."""
    p = vnp.ones(R.shape[1])
    s = vnp.zeros(R.shape[1])
    for t in range(R.shape[0]):
        s = s + p * X[t]
        p = p * R[t]
    return np.sum(s ** 2) + np.sum(p)


def scaled_sum_of_products_ref(R, X):
    P = np.cumprod(R, axis=0)
    s = np.sum(_prev(P, 1.0) * X, axis=0)
    return np.sum(s ** 2) + np.sum(P[-1])


def _growth_x_inputs(rng, n, d):
    return uniform(rng, n, d, low=0.99, high=1.01), normal(rng, n, d)


def swap_and_add(X):
    """Item 6: two carries swapped each step, one adding the input and a share of the
    other (a, b = b, 0.5 a + 0.4 b + x): a 2x2 system with a permutation in it."""
    a = vnp.zeros(X.shape[1])
    b = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        a, b = b, 0.5 * a + 0.4 * b + X[t]
        total = total + np.sum(a * b)
    return total


def swap_and_add_ref(X):
    M = np.array([[0.0, 1.0], [0.5, 0.4]])
    B = np.stack([np.zeros_like(X), X], axis=1)
    c = _matscan2(M, B, np.zeros((2, X.shape[1])))
    return np.sum(c[:, 0] * c[:, 1])


def momentum_weight_decay(p0, G):
    """Item 6: heavy-ball momentum with weight decay: the velocity reads the parameter
    (v = 0.9 v + g + 0.01 p) and the parameter the new velocity (p -= 0.1 v)."""
    v = vnp.zeros_like(p0)
    p = p0
    loss = 0.0
    for t in range(G.shape[0]):
        v = 0.9 * v + G[t] + 0.01 * p
        p = p - 0.1 * v
        loss = loss + np.sum(p ** 2)
    return loss


def momentum_weight_decay_ref(p0, G):
    # (p, v)' = [[1 - 0.001, -0.09], [0.01, 0.9]] (p, v) + (-0.1 g, g)
    M = np.array([[1 - 0.001, -0.09], [0.01, 0.9]])
    B = np.stack([-0.1 * G, G], axis=1)
    c = _matscan2(M, B, np.stack([p0, np.zeros_like(p0)]))
    return np.sum(c[:, 0] ** 2)


def _p_g_inputs(rng, n, d):
    return normal(rng, d), normal(rng, n, d, scale=0.1)


# ------------------------------------------------------------------ scans of scans, buffers

def forward_backward_smoother(X):
    """Item 6: an exponential smoother run forwards into a buffer, then backwards over
    that buffer into a second one (a scan reading a scan's output in reverse order)."""
    n = X.shape[0]
    f = vnp.zeros_like(X)
    f[0] = X[0]
    for t in range(1, n):
        f[t] = 0.7 * f[t - 1] + 0.3 * X[t]
    b = vnp.zeros_like(X)
    b[n - 1] = f[n - 1]
    for t in range(n - 2, -1, -1):
        b[t] = 0.7 * b[t + 1] + 0.3 * f[t]
    return np.sum((b - X) ** 2)


def forward_backward_smoother_ref(X):
    n = X.shape[0]
    a = np.full((n - 1, 1), 0.7)
    f = np.concatenate([X[:1], _linrec(a, 0.3 * X[1:], X[0])])
    r = f[::-1]
    b = np.concatenate([r[:1], _linrec(a, 0.3 * r[1:], r[0])])[::-1]
    return np.sum((b - X) ** 2)


def sum_of_prefix_sums(X):
    """Item 6: a running sum and a running sum of it (a scan of a scan, two carries, the
    second reading the first's new value); the second's squares summed."""
    c = vnp.zeros(X.shape[1])
    s = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        c = c + X[t]
        s = s + 0.01 * c
        total = total + np.sum(s ** 2)
    return total


def sum_of_prefix_sums_ref(X):
    return np.sum((0.01 * np.cumsum(np.cumsum(X, axis=0), axis=0)) ** 2)


def decay_read_from_buffer(X, w):
    """Item 6: a decaying trace kept in a buffer and read back one step later by the loss
    (buf[t] = 0.9 buf[t-1] + x[t]; loss on buf[t-1] against x[t])."""
    n = X.shape[0]
    buf = vnp.zeros((n, X.shape[1]))
    buf[0] = X[0]
    loss = 0.0
    for t in range(1, n):
        buf[t] = 0.9 * buf[t - 1] + X[t]
        loss = loss + np.sum(w * (X[t] - 0.1 * buf[t - 1]) ** 2)
    return loss


def decay_read_from_buffer_ref(X, w):
    buf = _linrec(np.full((X.shape[0], 1), 0.9), X)
    return np.sum(w * (X[1:] - 0.1 * buf[:-1]) ** 2)


def matrix_state_decay(X, A):
    """Item 6: a matrix-shaped state decayed elementwise by a learned matrix and driven
    by rows of X laid out as matrices (H = A * H + X[t].reshape(4, -1))."""
    H = vnp.zeros(A.shape)
    total = 0.0
    for t in range(X.shape[0]):
        H = A * H + X[t].reshape(A.shape)
        total = total + np.sum(np.tanh(H))
    return total


def matrix_state_decay_ref(X, A):
    n = X.shape[0]
    P = A[None] ** np.arange(1, n + 1)[:, None, None]   # closed form: A^t in range here
    H = P * np.cumsum(X.reshape((n,) + A.shape) / P, axis=0)
    return np.sum(np.tanh(H))


def _xa_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, 4, d // 4, low=0.9, high=0.99)


# ------------------------------------------------------------------ extremes and hazards

def drawdown_sum(P):
    """Item 6: a running minimum of prices and the running sum of each price's height
    above it (s = s + (p - m) with m the new minimum): a cummin, then a cumsum."""
    m = P[0]
    s = vnp.zeros(P.shape[1])
    total = 0.0
    for t in range(1, P.shape[0]):
        m = np.minimum(m, P[t])
        s = s + (P[t] - m)
        total = total + np.sum(s)
    return total


def drawdown_sum_ref(P):
    m = np.minimum.accumulate(P, axis=0)[1:]
    return np.sum(np.cumsum(P[1:] - m, axis=0))


def _prices_inputs(rng, n, d):
    return (np.cumsum(normal(rng, n, d), axis=0),)


def cumulative_hazard(Hz, w):
    """Item 6: a cumulative hazard summed from positive rates (H += exp(h[t])) and the
    survival exp(-H) weighted at every step."""
    H = vnp.zeros(Hz.shape[1])
    total = 0.0
    for t in range(Hz.shape[0]):
        H = H + np.exp(Hz[t])
        total = total + np.sum(w * np.exp(-H))
    return total


def cumulative_hazard_ref(Hz, w):
    return np.sum(w * np.exp(-np.cumsum(np.exp(Hz), axis=0)))


def _hazard_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.3) - 5.0, uniform(rng, d, low=0.5, high=1.5)


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def _xw_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, d, low=0.5, high=1.5)


# ------------------------------------------------------------------------------- the suite

def _p(name, argnums, inputs, sizes=_SEQ):
    mod = globals()
    return Pattern(name, 6, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan", tags=("variant", "scans"))


PATTERNS = [
    _p("error_before_update", (0, 1), _xw_inputs),
    _p("position_after_velocity", (0, 1), _spring_inputs),
    _p("position_before_velocity", (0, 1), _spring_inputs),
    _p("scaled_sum_of_products", (0, 1), _growth_x_inputs),
    _p("swap_and_add", (0,), _x_inputs),
    _p("momentum_weight_decay", (0, 1), _p_g_inputs),
    _p("forward_backward_smoother", (0,), _x_inputs),
    _p("sum_of_prefix_sums", (0,), _x_inputs),
    _p("decay_read_from_buffer", (0, 1), _xw_inputs),
    _p("matrix_state_decay", (0, 1), _xa_inputs,
       {"small": {"n": 6, "d": 8}, "default": {"n": 300, "d": 64}}),
    _p("drawdown_sum", (0,), _prices_inputs),
    _p("cumulative_hazard", (0, 1), _hazard_inputs),
]
