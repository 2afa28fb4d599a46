"""The autograd-suite shim (bench/autograd_suite): autograd's API maps onto vecgrad's, and its
checks can fail."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

SHIM = pathlib.Path(__file__).resolve().parents[1] / "bench" / "autograd_suite" / "shim"


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(SHIM))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, check=False)


def test_shim_grad_is_vecgrads():
    r = _run("""
        import numpy as onp
        import autograd.numpy as np
        import autograd.numpy.random as npr
        import vecgrad.numpy as vnp
        from autograd import grad, value_and_grad
        assert np.sum is vnp.sum and npr.randn is onp.random.randn
        x = onp.linspace(0.0, 1.0, 5)
        onp.testing.assert_allclose(grad(lambda x: np.sum(np.sin(x)))(x), onp.cos(x))
        v, g = value_and_grad(lambda x, y: np.sum(x * y), 1)(x, 2.0)
        assert onp.isclose(v, 2 * x.sum()) and onp.isclose(g, x.sum())
        print("ok")
    """)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_shim_checks_fail_on_a_mismatch():
    r = _run("""
        import numpy as onp
        from autograd.test_util import check_equivalent, scalar_close
        assert scalar_close(1.0, 1.0 + 1e-9) and not scalar_close(1.0, 1.1)
        check_equivalent(onp.ones(3), onp.ones(3))
        try:
            check_equivalent(onp.ones(3), onp.ones(3) * 1.01)
        except AssertionError:
            print("raised")
    """)
    assert r.returncode == 0 and r.stdout.strip() == "raised", r.stderr


def test_shim_missing_counterparts_fail_one_test_not_the_import():
    r = _run("""
        import autograd.scipy.nothing_here as m
        try:
            m.f
        except AttributeError as e:
            print("missing" if "nothing_here.f" in str(e) else e)
    """)
    assert r.returncode == 0 and r.stdout.strip() == "missing", r.stderr
