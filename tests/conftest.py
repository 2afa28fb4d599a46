"""Shared test setup: typecheck after every pass, plus small numeric helpers."""
from __future__ import annotations

import os

os.environ["VECGRAD_TYPECHECK"] = "1"  # the pass pipeline typechecks after each pass
# The JAX tests compile many small XLA programs, and LLVM's optimizations are most of what
# that costs (about 40%); results do not depend on them. (Set before jax is imported.)
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_"
                               "level=0 --xla_llvm_disable_expensive_passes=true").strip()
if "VECGRAD_CACHE_DIR" not in os.environ:
    import tempfile
    os.environ["VECGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="vecgrad-test-cache-")

import numpy as np
import pytest

import vecgrad as vg

# Tests inspect every stage of compiled entries (users' entries keep only the final graph);
# tests/test_memory.py checks the default. Kernel choices go to a temporary cache directory.
vg.config(keep_stages=True)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def central_diff_check(f, args, argnums=0, rtol=1e-6, atol=1e-8, n_dirs=3, seed=0) -> float:
    """Compare vecgrad's gradient with float64 central differences in random directions
    (raises vg.GradCheckError on disagreement)."""
    return vg.check_grads(f, args, argnums=argnums, rtol=rtol, atol=atol, n_dirs=n_dirs,
                          seed=seed)


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Dense central-difference gradient of a scalar NumPy function (for small x)."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def jax():
    return pytest.importorskip("jax")


@pytest.fixture
def x64():
    """jax_enable_x64 on for the test (float64 on the JAX backend needs it), then restored;
    nothing to do where jax is not installed."""
    try:
        import jax
    except ImportError:
        yield
        return
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", old)


@pytest.fixture
def autograd_np():
    pytest.importorskip("autograd")
    import autograd.numpy as anp
    return anp


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `numba_full` (the numba backend's slow cold compiles beyond its default
    slice, see tests/test_primitives.py) run only with VECGRAD_NUMBA_FULL=1."""
    if os.environ.get("VECGRAD_NUMBA_FULL", "") not in ("", "0"):
        return
    skip = pytest.mark.skip(reason="numba full set: VECGRAD_NUMBA_FULL=1 runs it")
    for item in items:
        if "numba_full" in item.keywords:
            item.add_marker(skip)



# Property and fuzz tests draw the same examples on every run (a test's examples follow from
# its source), so that CI's verdict does not depend on luck: a rare case one random draw finds
# would make main red at random. VECGRAD_HYPOTHESIS_RANDOM=1 draws fresh examples (with the
# VECGRAD_*_EXAMPLES counts, to search for bugs).
from hypothesis import settings as _settings

_settings.register_profile("vecgrad", derandomize=not os.environ.get("VECGRAD_HYPOTHESIS_RANDOM"))
_settings.load_profile("vecgrad")
