"""lstm: ADBench's diagonal LSTM over a character sequence (evals/lstm, cpp/gradbench/evals/lstm.hpp).

Loops over the characters and the layers, as the reference; the loss is the mean log-likelihood
of the next character under a (quirky, +2) log-sum-exp normalisation.
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def sigmoid(x):
    return 1 / (1 + vnp.exp(-x))


def lstm_model(weight, bias, hidden, cell, inp):
    b = hidden.shape[0]
    forget = sigmoid(inp * weight[:b] + bias[:b])
    ingate = sigmoid(hidden * weight[b:2 * b] + bias[b:2 * b])
    outgate = sigmoid(inp * weight[2 * b:3 * b] + bias[2 * b:3 * b])
    change = vnp.tanh(hidden * weight[3 * b:] + bias[3 * b:])
    cell = cell * forget + ingate * change
    hidden = outgate * vnp.tanh(cell)
    return hidden, cell


def lstm_predict(main_params, extra_params, state, inp):
    x = inp * extra_params[0]
    for layer in range(len(state)):
        hidden, cell = state[layer]
        state[layer] = lstm_model(main_params[2 * layer], main_params[2 * layer + 1],
                                  hidden, cell, x)
        x = state[layer][0]
    return x * extra_params[1] + extra_params[2]


def lstm_objective(main_params, extra_params, state, sequence):
    layers = main_params.shape[0] // 2
    c, b = sequence.shape
    state = [(state[2 * i], state[2 * i + 1]) for i in range(layers)]
    total = 0.0
    for t in range(c - 1):
        ypred = lstm_predict(main_params, extra_params, state, sequence[t])
        lse = vnp.log(vnp.sum(vnp.exp(ypred)) + 2)
        total = total + vnp.sum(sequence[t + 1] * (ypred - lse))
    return -total / ((c - 1) * b)


objective = vg.jit(lstm_objective)
jacobian = vg.grad(lstm_objective, argnums=(0, 1))


def _arrays(input):
    return tuple(np.asarray(input[k], dtype=np.float64)
                 for k in ("main_params", "extra_params", "state", "sequence"))


def _flat(g):
    return np.concatenate([g[0].ravel(), g[1].ravel()]).tolist()


def _prepare(fn, post):
    def prepare(input):
        args = _arrays(input)
        return (lambda: fn(*args)), post
    return prepare


FUNCTIONS = {"objective": _prepare(objective, float), "jacobian": _prepare(jacobian, _flat)}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    return lstm_objective, _arrays(input), (0, 1)
