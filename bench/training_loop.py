"""A training loop that passes its iteration counter: `grad(loss)(params, it)` every step.

    python bench/training_loop.py [--steps N]

The model is autograd's `examples/lstm.py` (30 steps of a 40-unit LSTM over 60 one-hot
sequences of 128 characters), written once for both engines. The iteration counter is a
Python int argument that the loss does not use: vecgrad traces it as a value, so only the
first step compiles. Prints the first step (compile included) and the min/max of the later
steps for vecgrad and HIPS autograd, in this one process, and the largest gradient difference.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

T, N, A, S = 30, 60, 128, 40


def make_loss(xp: Any, lse: Any, inputs: np.ndarray) -> Any:
    def sigmoid(x: Any) -> Any:
        return 0.5 * (xp.tanh(x) + 1.0)

    def cam(W: Any, *args: Any) -> Any:
        cat = xp.concatenate((*args, xp.ones((args[0].shape[0], 1))), axis=1)
        return xp.dot(cat, W)

    def predict(params: dict) -> list:
        def update(inp: Any, h: Any, c: Any) -> tuple:
            change = xp.tanh(cam(params["change"], inp, h))
            forget = sigmoid(cam(params["forget"], inp, h))
            ingate = sigmoid(cam(params["ingate"], inp, h))
            outgate = sigmoid(cam(params["outgate"], inp, h))
            c = c * forget + ingate * change
            return outgate * xp.tanh(c), c

        def probs(h: Any) -> Any:
            out = cam(params["predict"], h)
            return out - lse(out, axis=1, keepdims=True)
        h = xp.repeat(params["init hiddens"], inputs.shape[1], axis=0)
        c = xp.repeat(params["init cells"], inputs.shape[1], axis=0)
        output = [probs(h)]
        for inp in inputs:
            h, c = update(inp, h, c)
            output.append(probs(h))
        return output

    def loss(params: dict, it: int) -> Any:
        lp = predict(params)
        ll = 0.0
        for t in range(inputs.shape[0]):
            ll += xp.sum(lp[t] * inputs[t])
        return -ll / (inputs.shape[0] * inputs.shape[1])
    return loss


def data() -> tuple[np.ndarray, dict]:
    rs = np.random.RandomState(0)
    inputs = np.zeros((T, N, A))
    inputs[np.arange(T)[:, None], np.arange(N)[None], rs.randint(0, A, (T, N))] = 1
    shapes = [("init cells", (1, S)), ("init hiddens", (1, S)), ("change", (A + S + 1, S)),
              ("forget", (A + S + 1, S)), ("ingate", (A + S + 1, S)),
              ("outgate", (A + S + 1, S)), ("predict", (S + 1, A))]
    return inputs, {k: rs.randn(*s) * 0.01 for k, s in shapes}


def steps(g: Any, params: dict, n: int) -> list[float]:
    out = []
    for it in range(n):
        t0 = time.perf_counter()
        g(params, it)
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    a = ap.parse_args(argv)
    inputs, params = data()
    engines = [("vecgrad", vg.grad(make_loss(vnp, vg.nn.logsumexp, inputs)))]
    try:
        import autograd
        import autograd.numpy as anp
        from autograd.scipy.special import logsumexp
        engines.append(("autograd", autograd.grad(make_loss(anp, logsumexp, inputs))))
    except ImportError:
        print("(autograd is not installed: vecgrad only)")
    for name, g in engines:
        ts = steps(g, params, a.steps)
        print(f"{name:9s} first step {ts[0]:.3f} s, later steps {min(ts[1:]):.4f} s min, "
              f"{max(ts[1:]):.4f} s max")
    if len(engines) == 2:
        gv, ga = (g(params, 3) for _, g in engines)
        print("largest gradient difference:", max(float(np.abs(gv[k] - ga[k]).max()) for k in gv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
