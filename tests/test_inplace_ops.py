"""Every in-place operator into an array and into its views (a row, a column, a strided block,
a transpose, a reshape, a fancy-indexed copy, a row read at a traced int) gives NumPy's values
and dtypes, for the dtype pairs where casting matters: a narrower or unsigned right-hand side,
booleans, Python scalars. Where NumPy raises (same_kind casting, bool subtract), vecgrad raises
too."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg

OPS = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", "<<=", ">>="]
PAIRS = [("float64", "uint8"), ("float32", "float64"), ("int32", "uint8"), ("int8", "int8"),
         ("int64", "int8"), ("bool", "bool"), ("float64", 1.5), ("int64", 2), ("uint8", 3)]
TARGETS = {  # the value written into, and the shape of the right-hand side
    "a": ("a", (3, 4)), "row": ("a[1]", (4,)), "column": ("a[:, 1]", (3,)),
    "block": ("a[1:, ::2]", (2, 2)), "transpose": ("a.T", (4, 3)),
    "reshape": ("a.reshape(-1)[:3]", (3,)), "row-view": ("v", (4,)),
    "traced-row": ("a[ix[1]]", (4,)),
}


def _program(op: str, target: str, scalar: object) -> object:
    rhs = "y" if scalar is None else repr(scalar)
    fancy = target == "a[[0, 2]]"
    src = (f"def f(x, y, ix):\n    a = x.copy()\n    v = a[0]\n    t = {target}\n"
           f"    {target if fancy else 't'} {op} {rhs}\n    return a, t\n")
    ns: dict = {}
    exec(src, ns)  # noqa: S102 (one program per operator and target)
    return ns["f"]


@pytest.mark.parametrize("op", OPS)
def test_inplace_operator_as_numpy(op):
    for da, db in PAIRS:
        for name, (target, shape) in TARGETS.items():
            scalar = db if not isinstance(db, str) else None
            f = _program(op, target, scalar)
            x = (np.arange(12).reshape(3, 4) % 5 + 1).astype(da)
            shape = (4, 4) if op == "@=" else shape
            y = (np.arange(np.prod(shape)).reshape(shape) % 3 + 1).astype(
                db if scalar is None else np.int64)
            ix = np.array([2, 1, 0])
            try:
                want = f(x, y, ix)
            except TypeError:  # NumPy refuses (casting, bool subtract): so must vecgrad
                with pytest.raises(TypeError):
                    vg.jit(f)(x, y, ix)
                continue
            except ValueError:
                with pytest.raises(ValueError):
                    vg.jit(f)(x, y, ix)
                continue
            got = vg.jit(f)(x, y, ix)
            for w, g in zip(want, got):
                g = np.asarray(g)
                assert (w.dtype, w.shape) == (g.dtype, g.shape), (op, da, db, name)
                np.testing.assert_array_equal(g, w, err_msg=f"{op} {da} {db} {name}")


def test_subtracting_unsigned_from_a_row_does_not_wrap():
    """`row -= u8` was `row += -u8` with the negation in uint8 (256 - u)."""
    def f(x, y):
        a = x.copy()
        t = a[1]
        t -= y
        return a
    x, y = np.ones((3, 4)), np.array([1, 2, 3, 4], np.uint8)
    np.testing.assert_array_equal(vg.jit(f)(x, y), f(x, y))
