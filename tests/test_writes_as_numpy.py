"""Assignments `a[index] = value` for 31 index forms (basic, negative and out-of-range slices,
None, Ellipsis, integer and boolean arrays, mixed, chained views) and 9 values (scalars, NumPy
scalars, arrays that broadcast, arrays with extra leading unit axes) of 3 shapes: vecgrad's
result is NumPy's, and where NumPy raises, vecgrad raises."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

INDEX = ["[1]", "[-1]", "[1:3]", "[::-1]", "[::-2]", "[5:1:-1]", "[-100:100]", "[10:]",
         "[..., 1]", "[None, 1]", "[:, ::-1][1]", "[1, ::2]", "[[0, 2]]", "[[-1, 0]]",
         "[np.array([True, False, True])]", "[:, [3, 1]]", "[[0, 2], [1, 3]]",
         "[[[0], [2]], [1, 3]]", "[1:, [0, 2]]", "[[2, 0], 1:]", "[np.ix_([0, 2], [1, 3])]",
         "[..., [1, 2]]", "[[0, 1], ...]", "[()]", "[...]", "[:, None, 1]", "[1][::-1]",
         "[:, 1][[0, 2]]", "[x > 0]", "[np.s_[1:3], 2]", "[[0, 0]]"]
VALUES = ["7.0", "y", "y[:1]", "y.T", "y[0]", "y[:, :1]", "y.sum()", "np.float32(2)", "3"]


@pytest.mark.parametrize("index", INDEX)
def test_assignment_as_numpy(index):
    x = np.arange(12.0).reshape(3, 4) - 5
    for value in VALUES:
        ns: dict = {"np": np}
        exec(f"def f(x, y):\n    a = x.copy()\n    a{index} = {value}\n    return a\n", ns)  # noqa: S102
        f = ns["f"]
        for y in [np.arange(12.0).reshape(3, 4) * 10, np.ones((2, 2)), np.ones((1, 3))]:
            try:
                want = f(x, y)
            except (ValueError, IndexError, TypeError):
                with pytest.raises((ValueError, IndexError, TypeError)):
                    vg.jit(f)(x, y)
                continue
            got = vg.jit(f)(x, y)
            assert got.dtype == want.dtype, (index, value, y.shape)
            np.testing.assert_array_equal(got, want, err_msg=f"a{index} = {value}, y {y.shape}")


@pytest.mark.parametrize("dtype", [float, int, bool, np.float32, np.uint8])
def test_complex_scalar_into_a_real_buffer_is_numpys_type_error(dtype):
    def f(x):
        b = vnp.zeros(3, dtype=dtype)
        b[0] = 1 + 2j  # (NumPy: TypeError, not the real part)
        return b * x
    with pytest.raises(TypeError, match="not 'complex'"):
        vg.jit(f)(np.ones(3))
