"""Every NumPy ufunc and the common reductions give NumPy's dtype, shape and values for every
input dtype (bool, signed and unsigned integers, float16/32/64), traced under `vg.jit`: a
result that differs only in its dtype is still a silent wrong answer (an int8 sum that should
wrap, a float32 statistic that NumPy computes in float64, a float16 result from an int8)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.errors import VecgradError

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.float16,
          np.float32, np.float64]
UFUNCS = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))
R = np.random.default_rng(0)


def _data(dt: type) -> np.ndarray:
    kind = np.dtype(dt).kind
    if kind == "i":
        return R.integers(-3, 4, size=(3, 4)).astype(dt)
    if kind in "ub":
        return R.integers(0, 5, size=(3, 4)).astype(dt)
    return (R.standard_normal((3, 4)) * 2).astype(dt)


def _same(ref: object, got: object, what: str) -> None:
    refs = ref if isinstance(ref, tuple) else (ref,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(refs) == len(gots), what
    for r, g in zip(refs, gots):
        r, g = np.asarray(r), np.asarray(g)
        assert (r.dtype, r.shape) == (g.dtype, g.shape), what
        rtol = 1e-2 if r.dtype == np.float16 else 1e-6  # (NumPy's float16 loops round more)
        assert np.allclose(r, g, rtol=rtol, atol=1e-6, equal_nan=True), what


def _each_dtype(f, nargs: int = 1) -> None:
    """f on every dtype NumPy accepts it for: vecgrad's result is NumPy's, or a typed
    VecgradError (never another exception, never a different dtype)."""
    for dt in DTYPES:
        args = (_data(dt),) * nargs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = f(*args)
            except Exception:  # noqa: BLE001, S112 (NumPy refuses this dtype: nothing to compare)
                continue
            try:
                got = vg.jit(f)(*args)
            except VecgradError:
                continue
        _same(ref, got, np.dtype(dt).name)


@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_dtypes_as_numpy(name):
    uf = getattr(np, name)
    _each_dtype(uf, uf.nin)


REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "std": np.std, "var": np.var,
    "max": np.max, "min": np.min, "cumsum": np.cumsum, "cumprod": np.cumprod,
    "nansum": np.nansum, "nanmean": np.nanmean, "nanprod": np.nanprod, "median": np.median,
    "ptp": np.ptp, "argmax": np.argmax, "all": np.all, "any": np.any,
    "count_nonzero": np.count_nonzero, "diff": np.diff, "sort": np.sort, "round": np.round,
    "quantile": lambda x: np.quantile(x, 0.3), "cov": np.cov, "corrcoef": np.corrcoef,
    "gradient": np.gradient, "i0": np.i0, "trace": np.trace, "norm": np.linalg.norm,
    "vecdot": lambda x: np.vecdot(x, x), "matmul": lambda x: x @ x.T,
    "clip": lambda x: np.clip(x, 1, 3), "interp": lambda x: np.interp(x, np.sort(x.ravel()),
                                                                      x.ravel()),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_function_dtypes_as_numpy(name):
    _each_dtype(REDUCTIONS[name])


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod", "mean", "nansum",
                                  "nanprod", "nancumsum", "nanmean"])
def test_reduction_in_a_narrow_dtype_wraps_as_numpy(name):
    """`dtype=` names the accumulator: an int8 sum wraps, a boolean sum is `or`."""
    x = (np.arange(24).reshape(2, 12) * 9).astype(np.int8)
    f = getattr(np, name)
    mask = np.arange(24).reshape(2, 12) % 3 == 0
    for src in [x, x.astype(np.uint8), x.astype(bool), x.astype(np.float32)]:
        for dt in [np.int8, np.int16, np.uint8, bool, np.float32, None]:
            for kw in [{}, {"keepdims": True}, {"where": mask}, {"initial": 3}]:
                if kw and "cum" in name:
                    continue
                try:
                    ref = f(src, axis=-1, dtype=dt, **kw)
                except TypeError:
                    continue
                got = vg.jit(lambda s, dt=dt, kw=kw: f(s, axis=-1, dtype=dt, **kw))(src)
                _same(ref, got, f"{src.dtype} dtype={dt} {kw}")


MIXED = [np.bool_, np.int8, np.uint8, np.int64, np.float32, np.float64]
SCALARS = [True, 3, -2, 300, 2.5, np.float32(1.5), np.int8(3)]
BINARY = [n for n in UFUNCS if getattr(np, n).nin == 2 and getattr(np, n).nout == 1
          and getattr(np, n).signature is None]  # (not the gufuncs: matmul, vecdot, ...)


def _binary_cases() -> list:
    arrays = [(_data(a), _data(b)) for a in MIXED for b in MIXED]
    return arrays + [(_data(a), s) for a in MIXED for s in SCALARS] + \
        [(s, _data(a)) for a in MIXED for s in SCALARS]


@pytest.mark.parametrize("name", BINARY)
def test_binary_ufunc_of_mixed_dtypes_and_python_scalars_as_numpy(name):
    """NumPy 2's promotion (NEP 50): Python scalars are weak, NumPy scalars are not; a Python
    int out of an array's range compares exactly (`uint8 < -2`) or raises OverflowError."""
    uf = getattr(np, name)
    for x, y in _binary_cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = uf(x, y)
            except OverflowError:
                with pytest.raises(OverflowError):
                    _traced(uf, x, y)
                continue
            except Exception:  # noqa: BLE001, S112 (no loop for these dtypes)
                continue
            got = _traced(uf, x, y)
        _same(want, got, f"{name}({type(x).__name__}/{np.asarray(x).dtype}, "
                         f"{type(y).__name__}/{np.asarray(y).dtype})")


def _traced(uf, x, y):
    """uf(x, y) under vg.jit with the arrays traced and the scalars as they are."""
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        return vg.jit(uf)(x, y)
    if isinstance(x, np.ndarray):
        return vg.jit(lambda a: uf(a, y))(x)
    return vg.jit(lambda b: uf(x, b))(y)
