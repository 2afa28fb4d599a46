"""Item 6, recurrences: first-order linear recurrences that a scan computes (prefix sums,
decays, products, running max/min, vector states, returns computed backwards), and nonlinear
ones (a tanh RNN, an LSTM) that must stay sequential and correct. The references use
np.cumsum & co or the closed form; the nonlinear references are NumPy loops with the input
projection hoisted out of the loop."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform


def cumsum_buffer(x, w):
    """Item 6: a prefix sum written into a buffer, c[i] = c[i-1] + x[i]."""
    c = vnp.zeros_like(x)
    c[0] = x[0]
    for i in range(1, len(x)):
        c[i] = c[i - 1] + x[i]
    return vnp.sum(w * c ** 2)


def cumsum_buffer_ref(x, w):
    return np.sum(w * np.cumsum(x, axis=0) ** 2)


def sequence_inputs(rng, T, b):
    return normal(rng, T, b, scale=0.1), normal(rng, T, b)


def learned_decay(a, x):
    """Item 6: c = a * c + x[i] with a learned scalar decay a; the energy sum(c**2) of every
    state is accumulated."""
    c = x[0]
    total = vnp.sum(c ** 2)
    for i in range(1, len(x)):
        c = a * c + x[i]
        total = total + vnp.sum(c ** 2)
    return total


def learned_decay_ref(a, x):
    p = a ** np.arange(len(x))[:, None]          # closed form: c_t = a^t cumsum(a^-j x_j)
    return np.sum((p * np.cumsum(x / p, axis=0)) ** 2)


def decay_inputs(rng, T, b):
    return np.array(0.97), normal(rng, T, b)


def survival(hazard_logits, weights):
    """Item 6: survival probabilities s = s * (1 - sigmoid(h[t])), collected in a list."""
    s = 1.0
    S = []
    for t in range(len(hazard_logits)):
        s = s * (1.0 - vg.nn.sigmoid(hazard_logits[t]))
        S.append(s)
    return vnp.sum(vnp.stack(S) * weights)


def survival_ref(hazard_logits, weights):
    return np.sum(np.cumprod(1.0 / (1.0 + np.exp(hazard_logits)), axis=0) * weights)


def survival_inputs(rng, T, b):
    return normal(rng, T, b, scale=0.5) - 3.0, normal(rng, T, b)


def running_max(x, w):
    """Item 6: a running maximum m = maximum(m, x[t]), appended to a list."""
    m = x[0]
    out = [m]
    for t in range(1, len(x)):
        m = vnp.maximum(m, x[t])
        out.append(m)
    return vnp.sum(vnp.stack(out) * w)


def running_max_ref(x, w):
    return np.sum(np.maximum.accumulate(x, axis=0) * w)


def rebound_above_low(prices):
    """Item 6: a running minimum kept in a buffer, lows[t] = minimum(lows[t-1], p[t]), and the
    squared rebound of the price above it."""
    lows = vnp.empty(prices.shape)
    lows[0] = prices[0]
    for t in range(1, len(prices)):
        lows[t] = vnp.minimum(lows[t - 1], prices[t])
    return vnp.sum((prices - lows) ** 2)


def rebound_above_low_ref(prices):
    return np.sum((prices - np.minimum.accumulate(prices, axis=0)) ** 2)


def prices_inputs(rng, T, b):
    return (np.cumsum(normal(rng, T, b), axis=0),)


def diagonal_linear_rnn(a, x):
    """Item 6: a vector-state linear recurrence h = a * h + x[t] (a diagonal transition),
    states stacked."""
    h = vnp.zeros(x.shape[1])
    hs = []
    for t in range(len(x)):
        h = a * h + x[t]
        hs.append(h)
    return vnp.sum(vnp.tanh(vnp.stack(hs)))


def diagonal_linear_rnn_ref(a, x):
    p = a[None, :] ** np.arange(len(x))[:, None]
    return np.sum(np.tanh(p * np.cumsum(x / p, axis=0)))


def diagonal_inputs(rng, T, d):
    return uniform(rng, d, low=0.9, high=0.99), normal(rng, T, d, scale=0.3)


def discounted_returns(rewards, values, gamma):
    """Item 6: returns computed backwards over range(T-1, -1, -1), G = r[t] + gamma * G,
    written into a buffer; a squared value loss."""
    returns = vnp.zeros(rewards.shape)
    G = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        G = rewards[t] + gamma * G
        returns[t] = G
    return vnp.sum((returns - values) ** 2)


def discounted_returns_ref(rewards, values, gamma):
    p = gamma ** np.arange(len(rewards))[:, None]
    G = np.cumsum((p * rewards)[::-1], axis=0)[::-1] / p
    return np.sum((G - values) ** 2)


def returns_inputs(rng, T, b):
    return normal(rng, T, b), normal(rng, T, b), 0.99


def tanh_rnn(W, U, b, xs, h0):
    """Item 6: a nonlinear recurrence h = tanh(W @ h + U @ x + b) over the steps of xs, for a
    batch of sequences; it stays sequential."""
    h = h0
    for x in xs:
        h = vnp.tanh(W @ h + U @ x + b[:, None])
    return vnp.sum(h ** 2)


def tanh_rnn_ref(W, U, b, xs, h0):
    T, n_in, B = xs.shape
    ux = (U @ xs.transpose(1, 0, 2).reshape(n_in, T * B)).reshape(-1, T, B) + b[:, None, None]
    h = h0
    for t in range(T):
        h = np.tanh(W @ h + ux[:, t])
    return np.sum(h ** 2)


def rnn_inputs(rng, T, n_in, n_h, b):
    return (normal(rng, n_h, n_h, scale=n_h ** -0.5), normal(rng, n_h, n_in, scale=n_in ** -0.5),
            normal(rng, n_h, scale=0.1), normal(rng, T, n_in, b), normal(rng, n_h, b))


def lstm(Wx, Wh, b, xs, h0, c0):
    """Item 6: an LSTM unrolled over time; the four gates are row blocks z[k*H:(k+1)*H] of one
    pre-activation; the loss sums every hidden state's energy."""
    H = h0.shape[0]
    h, c = h0, c0
    loss = 0.0
    for x in xs:
        z = Wx @ x + Wh @ h + b[:, None]
        i, f = vg.nn.sigmoid(z[:H]), vg.nn.sigmoid(z[H:2 * H])
        o, g = vg.nn.sigmoid(z[2 * H:3 * H]), vnp.tanh(z[3 * H:])
        c = f * c + i * g
        h = o * vnp.tanh(c)
        loss = loss + vnp.sum(h ** 2)
    return loss


def lstm_ref(Wx, Wh, b, xs, h0, c0):
    T, n_in, B = xs.shape
    zx = (Wx @ xs.transpose(1, 0, 2).reshape(n_in, T * B)).reshape(-1, T, B) + b[:, None, None]
    H = h0.shape[0]
    h, c, loss = h0, c0, 0.0
    for t in range(T):
        z = zx[:, t] + Wh @ h
        s = 1.0 / (1.0 + np.exp(-z[:3 * H]))
        c = s[H:2 * H] * c + s[:H] * np.tanh(z[3 * H:])
        h = s[2 * H:] * np.tanh(c)
        loss += np.sum(h ** 2)
    return loss


def lstm_inputs(rng, T, n_in, n_h, b):
    return (normal(rng, 4 * n_h, n_in, scale=n_in ** -0.5),
            normal(rng, 4 * n_h, n_h, scale=n_h ** -0.5), normal(rng, 4 * n_h, scale=0.1),
            normal(rng, T, n_in, b), normal(rng, n_h, b, scale=0.1), normal(rng, n_h, b, scale=0.1))


def prefix_features(x, W):
    """Items 5 and 6: a running sum s = s + x[t] with a layer hanging off every prefix."""
    s = vnp.zeros(x.shape[1])
    total = 0.0
    for t in range(len(x)):
        s = s + x[t]
        total = total + vnp.sum(vnp.tanh(W @ s))
    return total


def prefix_features_ref(x, W):
    return np.sum(np.tanh(np.cumsum(x, axis=0) @ W.T))


def prefix_inputs(rng, T, d, h):
    return normal(rng, T, d, scale=0.1), normal(rng, h, d, scale=d ** -0.5)


_SEQ = {"small": {"T": 7, "b": 3}, "default": {"T": 1000, "b": 32}}
_RNN = {"small": {"T": 5, "n_in": 3, "n_h": 4, "b": 2},
        "default": {"T": 100, "n_in": 32, "n_h": 64, "b": 32}}

PATTERNS = [
    Pattern("cumsum_buffer", 6, cumsum_buffer, cumsum_buffer_ref, sequence_inputs, _SEQ,
            (0, 1), target="scan"),
    Pattern("learned_decay", 6, learned_decay, learned_decay_ref, decay_inputs,
            {"small": {"T": 7, "b": 3}, "default": {"T": 500, "b": 64}}, (0, 1), target="scan"),
    Pattern("survival", 6, survival, survival_ref, survival_inputs, _SEQ, (0, 1),
            target="scan"),
    Pattern("running_max", 6, running_max, running_max_ref, sequence_inputs, _SEQ, (0, 1),
            target="scan"),
    Pattern("rebound_above_low", 6, rebound_above_low, rebound_above_low_ref, prices_inputs,
            _SEQ, (0,), target="scan"),
    Pattern("diagonal_linear_rnn", 6, diagonal_linear_rnn, diagonal_linear_rnn_ref,
            diagonal_inputs, {"small": {"T": 7, "d": 3}, "default": {"T": 300, "d": 128}},
            (0, 1), target="scan"),
    Pattern("discounted_returns", 6, discounted_returns, discounted_returns_ref, returns_inputs,
            _SEQ, (0, 1), target="scan"),
    Pattern("prefix_features", 6, prefix_features, prefix_features_ref, prefix_inputs,
            {"small": {"T": 7, "d": 3, "h": 4}, "default": {"T": 1000, "d": 32, "h": 32}},
            (0, 1), target="scan"),
    Pattern("tanh_rnn", 6, tanh_rnn, tanh_rnn_ref, rnn_inputs, _RNN, (0, 1, 2, 3, 4),
            target="rolled"),
    Pattern("lstm", 6, lstm, lstm_ref, lstm_inputs, _RNN, (0, 1, 2, 3, 4, 5), target="rolled"),
]
