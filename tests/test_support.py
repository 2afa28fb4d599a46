"""The generated support table (docs/numpy_support.md) is current, and its statuses are
right: ufuncs marked differentiable have gradients that match central differences, those
marked without gradient give zero, and data-dependent functions raise TraceError."""
from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest
from conftest import central_diff_check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import support

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "numpy_support.md"


def test_committed_table_is_current():
    text = DOC.read_text()
    if f"namespaces of {support.numpy_version()} (" not in text:
        pytest.skip(f"the table was generated with other versions than "
                    f"{support.numpy_version()}")
    assert text == support.table(), ("docs/numpy_support.md is out of date: run "
                                     "`python -m vecgrad support-table -o docs/numpy_support.md`")


def test_readme_links_the_table():
    readme = DOC.parents[1] / "README.md"
    assert "docs/numpy_support.md" in readme.read_text()


def _ufuncs(status: str) -> list[str]:
    """NumPy's elementwise ufuncs (not gufuncs such as matvec) with this status."""
    return [n for n in support.public_functions(np) if isinstance(getattr(np, n), np.ufunc)
            and getattr(np, n).signature is None and support.status(n, vnp) == status]


def _inputs(name: str, r: np.random.Generator) -> list[np.ndarray] | None:
    """Float inputs inside the function's domain (where NumPy gives finite values)."""
    f = getattr(np, name)
    for lo, hi in ((0.2, 0.6), (1.2, 1.8)):
        args = [r.uniform(lo, hi, (3,)) for _ in range(f.nin)]
        if name == "ldexp":  # (float, int)
            args[1] = r.integers(-3, 3, (3,))
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = f(*args)
        except TypeError:
            return None  # no float loop (bitwise functions)
        outs = out if isinstance(out, tuple) else (out,)
        if all(np.all(np.isfinite(o)) for o in outs):
            return args
    return None


@pytest.mark.parametrize("name", _ufuncs(support.DIFF))
def test_differentiable_ufuncs_have_gradients(name):
    args = _inputs(name, np.random.default_rng(0))
    assert args is not None, f"no float domain found for {name}"
    wrt = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")

    def total(*a):  # every float output counts (divmod: the remainder has the gradient)
        out = getattr(np, name)(*a)
        return sum(vnp.sum(o ** 2) for o in (out if isinstance(out, tuple) else (out,))
                   if o.dtype.kind == "f")
    g = vg.grad(total, argnums=wrt)(*args)
    assert any(np.any(gi != 0) for gi in g), f"{name} is listed as differentiable"
    central_diff_check(total, args, argnums=wrt)


@pytest.mark.parametrize("name", _ufuncs(support.NOGRAD))
def test_nondifferentiable_ufuncs_give_zero_gradient(name):
    args = _inputs(name, np.random.default_rng(1))
    if args is None:
        pytest.skip(f"{name} has no float loop")
    g = vg.grad(lambda *a: vnp.sum(a[0] * vnp.where(getattr(np, name)(*a), 1.0, 2.0)),
                argnums=0)(*args)
    want = np.where(getattr(np, name)(*args), 1.0, 2.0)  # d/dx x * c(x) = c(x): c adds 0
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("name", sorted(support.DATA_DEPENDENT))
def test_data_dependent_functions_raise_on_traced_input(name):
    two = name in ("intersect1d", "setdiff1d", "setxor1d", "union1d")
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda x: getattr(np, name)(*((x, x) if two else (x,))))(np.arange(4.0))


def test_unsupported_functions_raise_not_implemented_with_the_line():
    missing = [n for n in support.public_functions(np) if support.status(n, vnp) ==
               support.MISSING and n not in ("angle", "real", "imag", "conj", "conjugate")]
    assert missing
    for n in missing:  # (a function NumPy does not dispatch says so through __array__)
        nargs = 2 if n == "polydiv" else 1
        with pytest.raises((NotImplementedError, vg.TracedIntoNumpyError), match=n):
            vg.jit(lambda x, n=n, k=nargs: getattr(np, n)(*(x,) * k))(np.arange(1.0, 5.0))


def test_cli_writes_the_table(tmp_path):
    from vecgrad.cli import main
    out = tmp_path / "t.md"
    assert main(["support-table", "-o", str(out)]) == 0
    assert out.read_text() == support.table()
