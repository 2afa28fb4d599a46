"""Gradient cost of linear-algebra, FFT and SciPy losses: the compiled gradient's time over the
plain NumPy/SciPy forward of the same loss, measured in one process (min of repeated runs).

    OPENBLAS_NUM_THREADS=1 python bench/linalg.py [--repeat N]

(One BLAS thread: on a loaded shared machine OpenBLAS's spinning threads make single LAPACK
calls hundreds of times slower, for NumPy and vecgrad alike.)
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import scipy.stats as st
from losses import table

import vecgrad.numpy as vnp
from vecgrad.scipy.stats import multivariate_normal as mvn

R = np.random.default_rng(0)


def _spd(n: int) -> np.ndarray:
    a = R.standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


def gp_nll(m, K, y):
    return m.linalg.slogdet(K)[1] + y @ m.linalg.solve(K, y)


def spectrum(m, a):
    w, v = m.linalg.eigh(a)
    return m.sum(w ** 2) + m.sum(m.abs(v[:, :3]))


def power(m, x):
    return m.sum(m.abs(m.fft.rfft(x)) ** 2)


def nuclear(m, a):
    return m.linalg.norm(a, "nuc")


CASES: dict[str, tuple[Callable, Callable, tuple]] = {
    "gp_nll: slogdet + solve, 200x200": (lambda *a: gp_nll(np, *a), lambda *a: gp_nll(vnp, *a),
                                         (_spd(200), R.standard_normal(200))),
    "mvn logpdf, 1000 points in 20-D": (
        lambda x, c: np.sum(st.multivariate_normal.logpdf(x, np.zeros(20), c)),
        lambda x, c: vnp.sum(mvn.logpdf(x, np.zeros(20), c)),
        (R.standard_normal((1000, 20)), _spd(20))),
    "eigh: eigenvalues and vectors, 100x100": (lambda a: spectrum(np, a),
                                               lambda a: spectrum(vnp, a),
                                               (R.standard_normal((100, 100)),)),
    "nuclear norm (svd), 200x100": (lambda a: nuclear(np, a), lambda a: nuclear(vnp, a),
                                    (R.standard_normal((200, 100)),)),
    "rfft power, 64 x 4096": (lambda x: power(np, x), lambda x: power(vnp, x),
                              (R.standard_normal((64, 4096)),)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=30)
    table(CASES, ap.parse_args().repeat)


if __name__ == "__main__":
    main()
