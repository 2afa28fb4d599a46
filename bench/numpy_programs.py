"""Natural programs calling the NumPy functions ML and scientific users call (session 25's
numpy lane; bench/numpy_coverage.py checks single calls, these are whole programs): loops
over samples, buffers written in place, comprehensions summed by Python's sum, each using
np.linalg (solve, slogdet, cholesky, inv, qr, norm with ord=, det, eigh, svd, lstsq, pinv,
matrix_power), np.einsum, cumsum / cumprod / diff / gradient, roll / pad / tile / repeat /
flip / rot90, sort / argsort / argmax / partition / searchsorted / lexsort, clip / where /
select / piecewise, interp, convolve / correlate, outer / kron / trace / tril / triu,
logaddexp / log1p / expm1 / hypot / arctan2, nan* reductions, percentile / median / quantile,
histogram, meshgrid / mgrid / indices masks, softmax and logsumexp by hand, keywords (axis=,
keepdims=, out=, dtype=, where=, initial=, ord=, mode=), x[mask] read.

Each program runs in NumPy (the oracle) and under vg.value_and_grad: ok (value to 1e-9, the
gradient within 1e-4 of float64 central differences along a random direction), refused (a
typed VecgradError), crash, wrong (value), wronggrad; programs computed in float32 compare
values only (central differences of float32 rounding are noise).

    python bench/numpy_programs.py [SUBSTR ...]
"""
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

import vecgrad as vg

sys.path.insert(0, str(Path(__file__).parent))
from numpy_programs_cases import P

rng = np.random.default_rng(0)


def check(name):
    f, shapes, argnums = P[name]
    args = [rng.standard_normal(s) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = f(*[a.copy() for a in args])
        except Exception as e:  # noqa: BLE001 (NumPy itself raises: nothing to compare)
            return "n/a", f"numpy: {type(e).__name__}: {e}"
        try:
            if not argnums:  # (float32 inside: values only)
                val, grads = vg.jit(f)(*args), ()
            else:
                val, grads = vg.value_and_grad(f, argnums=argnums)(*args)
        except vg.VecgradError as e:
            return "refused", f"{type(e).__name__}: {str(e)[:300]}"
        except Exception as e:  # noqa: BLE001 (any other exception is a crash, reported)
            return "crash", f"{type(e).__name__}: {str(e)[:300]}\n" + traceback.format_exc()[-1500:]
    if not np.allclose(val, ref, rtol=1e-9, atol=1e-9):
        return "wrong", f"value {val} vs {ref}"
    # central differences
    eps = 1e-6
    for k, a in enumerate(argnums):
        d = rng.standard_normal(args[a].shape)
        ap = list(args); am = list(args)
        ap[a] = args[a] + eps * d
        am[a] = args[a] - eps * d
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            num = (f(*ap) - f(*am)) / (2 * eps)
        gk = grads[k] if isinstance(grads, tuple) else grads
        an = np.sum(gk * d)
        if not np.isclose(an, num, rtol=1e-4, atol=1e-5):
            return "wronggrad", f"grad {an} vs {num}"
    return "ok", ""


if __name__ == "__main__":
    names = [n for n in P if not sys.argv[1:] or any(s in n for s in sys.argv[1:])]
    from collections import Counter
    c = Counter()
    for n in names:
        k, msg = check(n)
        c[k] += 1
        print(f"{k:9s} {n}  {msg}", flush=True)
    print(len(names), dict(c))
