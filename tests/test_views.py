"""Views and copies exactly as NumPy: what aliases what, what is a scalar, what is writable.

Each program runs once with `xp=numpy` (the reference) and once traced with `xp=vecgrad.numpy`
under `vg.jit`; values must agree, and gradients must match central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_numpy_api import check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.errors import ReadOnlyError

R = np.random.default_rng(3)
X = R.standard_normal(4)
M = R.standard_normal((4, 4))


# --------------------------------------------------- integer indexing: scalars are copies

def test_swap_through_scalar_temporary_1d():
    def f(xp, b):
        b = b.copy()
        t = b[0]
        b[0] = b[1]
        b[1] = t
        return b * np.arange(1.0, 5.0)
    check(f, X)


def test_scalar_read_then_overwritten_keeps_old_value():
    def f(xp, s):
        s = s.copy()
        old = s[2]
        s[2] = 0.0
        return s * old
    check(f, X)


def test_iterating_a_1d_array_yields_scalar_copies():
    def f(xp, x):
        x = x.copy()
        items = [t for t in x]
        x[0] = 100.0
        return xp.stack(items) * x
    check(f, X)


def test_scalar_inplace_op_rebinds_the_name_only():
    def f(xp, x):
        s = xp.sum(x)
        u = s
        s += 1.0
        s *= x[0]
        e = x[1]
        v = e
        e -= x[2]
        return u * x + s + v * e
    check(f, X)


def test_scalar_item_assignment_raises_like_numpy():
    def f(x):
        s = vnp.sum(x)
        s[...] = 1.0
        return s
    with pytest.raises(TypeError, match="does not support item assignment"):
        vg.jit(f)(X)
    with pytest.raises(TypeError, match="does not support item assignment"):
        np.sum(X)[...] = 1.0  # the same in NumPy


def test_element_read_modify_write_back():
    def f(xp, x):
        a = x.copy()
        t = a[0]
        t += x[3]
        t += x[2]
        a[0] = t  # the two accumulations become the write
        u = a[1]
        a[2] = 5.0  # u was read before this write: a stale copy, written elsewhere
        u += x[0]
        a[3] = u
        w = a[2]
        w += 1.0  # never written back: a is unchanged
        return a * w
    check(f, X)


def test_element_accumulation_is_one_setitem_add():
    def f(x):
        out = vnp.zeros(2)
        out[0] += x[0] * x[1]
        out[1] += x[2]
        return out
    g = vg.api.trace_graph(f, (X,))
    assert [e.prim.name for e in g.eqns].count("setitem_add") == 2
    assert "setitem" not in [e.prim.name for e in g.eqns]
    check(lambda xp, x: f(x) if xp is vnp else np.array([x[0] * x[1], x[2]]), X)


def test_zero_d_array_is_written_in_place():
    def f(xp, x):
        a = xp.zeros(())
        b = a
        a += x[0]  # a 0-d array aliases: b sees it
        a[...] = a * 3 + x[1]
        v = xp.zeros(3)
        e = v[1, ...]  # an ellipsis keeps a 0-d view
        e += x[2]
        e[()] = e * 2
        return b * x, v
    check(f, X)


def test_asarray_and_array_of_a_scalar_are_new_arrays():
    def f(xp, x):
        s = x[0] * 2
        a = xp.asarray(s)
        a += 1.0
        c = xp.array(s)
        c[...] = 3.0
        return s * x + a + c
    check(f, X)


# ------------------------------------------------------------- fancy indexing copies

def test_fancy_indexed_copy_of_argument_is_writable():
    def f(xp, x):
        y = x[[0, 2]]
        y[0] = 5.0
        z = x[np.array([True, False, True, True])]  # a boolean mask is fancy too
        z[1] = 2.0
        return y * x[:2], z
    check(f, X)


def test_fancy_indexed_copy_does_not_see_later_writes():
    def f(xp, x):
        a = x.copy()
        c = a[np.array([1, 2])]
        a[1] = 0.0
        c[0] += 1.0
        return c * x[:2], a
    check(f, X)


# ----------------------------------------------------- reshape, ravel, flatten, astype

def test_flatten_is_a_copy():
    def f(xp, x):
        a = x.reshape(2, 2).copy()
        fl = a.flatten()
        fl[0] = 10.0
        return a, fl
    check(f, X)


def test_astype_is_a_copy():
    def f(xp, x):
        a = x.copy()
        y = a.astype(np.float64)  # the same dtype: still a copy
        y[0] = 7.0
        return a * 2, y
    check(f, X)


def test_reshape_of_a_strided_slice_is_a_view_where_numpy_makes_one():
    def f(xp, x):
        a = xp.zeros((4, 4))
        a[:] = x
        w = a[:, 0].reshape(2, 2)  # strided, but reshapable without a copy: a view
        r = a[::2].reshape(2, 2, 2)  # likewise
        a[0, 0] = 9.0
        r[1, 1, 1] = x[1, 1]
        return w * x[0, 0], a
    check(f, M)


def test_reshape_that_numpy_must_copy_is_a_copy():
    def f(xp, x):
        a = xp.zeros((4, 4))
        a[:] = x
        flat = a[::2].reshape(-1)  # rows 0 and 2 are not one contiguous run: a copy
        t = a.T.reshape(-1)
        flat[0] = 5.0
        t[1] = 6.0
        a[1, 1] = x[2, 2]
        return a, flat, t
    check(f, M)


def test_ravel_of_a_non_contiguous_view_is_a_copy():
    def f(xp, x):
        a = xp.zeros((4, 4))
        a[:] = x
        col = a[:, 0].ravel()  # 1-D but strided: NumPy copies
        c1 = a[:, :1].ravel()  # a copy too, although reshape(-1) would be a view
        r1 = a[:, :1].reshape(-1)
        whole = a.ravel()  # contiguous: a view
        col[0] = 5.0
        c1[1] = 6.0
        r1[2] = 7.0
        whole[15] = 8.0
        return a, col, c1
    check(f, M)


# ------------------------------------------------------------------- views of all kinds

def test_broadcast_to_is_a_read_only_view():
    def f(xp, x):
        a = x.copy()
        b = xp.broadcast_to(a, (2, 4))
        s = xp.broadcast_to(a, (4,))
        a[0] = 0.0  # both views see it
        return b * x, s * 1.0
    check(f, X)

    def write(x):
        b = vnp.broadcast_to(vnp.zeros(4), (2, 4))
        b[0, 0] = x[0]
        return b
    with pytest.raises(ReadOnlyError, match="broadcast_to"):
        vg.jit(write)(X)
    with pytest.raises(ValueError, match="read-only"):
        np.broadcast_to(np.zeros(4), (2, 4))[0, 0] = 1.0  # NumPy refuses too


VIEWS = {
    "T": lambda xp, a: a.T,
    "ellipsis": lambda xp, a: a[...],
    "empty-tuple": lambda xp, a: a[()],
    "None": lambda xp, a: a[None],
    "row": lambda xp, a: a[1],
    "col-slice": lambda xp, a: a[:, 1:3],
    "neg-step": lambda xp, a: a[::-1, ::2],
    "transpose": lambda xp, a: xp.transpose(a),
    "swapaxes": lambda xp, a: xp.swapaxes(a, 0, 1),
    "moveaxis": lambda xp, a: xp.moveaxis(a, 0, 1),
    "expand_dims": lambda xp, a: xp.expand_dims(a, 0),
    "squeeze-row": lambda xp, a: xp.squeeze(a[:1]),
    "squeeze-col": lambda xp, a: xp.squeeze(a[:, :1]),
    "reshape-2x8": lambda xp, a: a.reshape(2, 8),
    "reshape-16": lambda xp, a: a.reshape(16),
    "ravel": lambda xp, a: a.ravel(),
    "T.T": lambda xp, a: a.T.T,
    "slice-of-slice": lambda xp, a: a[1:][:, 1:],
    "T-slice-reshape-copy": lambda xp, a: a.T[1:].reshape(-1),  # a copy
    "flatten-copy": lambda xp, a: a.flatten(),  # a copy
    "fancy-copy": lambda xp, a: a[[0, 1]],  # a copy
    "astype-copy": lambda xp, a: a.astype(np.float64),  # a copy
    "copy": lambda xp, a: a.copy(),  # a copy
    "split": lambda xp, a: xp.split(a, 2)[1],
    "ravel-F": lambda xp, a: a.ravel(order="F"),  # a copy
    "ravel-F-of-T": lambda xp, a: a.T.ravel(order="F"),  # a view
    "ravel-K-of-T": lambda xp, a: a.T.ravel(order="K"),  # a view
    "ravel-A-of-T": lambda xp, a: a.T.ravel(order="A"),  # a view
    "reshape-F": lambda xp, a: a.reshape(2, 8, order="F"),  # a copy
    "reshape-F-of-T": lambda xp, a: a.T.reshape((8, 2), order="F"),  # a view
    "flatten-F": lambda xp, a: a.flatten("F"),  # a copy
    "reshape-copy": lambda xp, a: xp.reshape(a, (16,), copy=True),  # a copy
    "stack-one": lambda xp, a: xp.stack([a]),  # a copy
    "stack-one-axis": lambda xp, a: xp.stack([a], axis=-1),  # a copy
    "stack-comprehension-one": lambda xp, a: xp.stack([r for r in a[:1]]),  # a copy
    "concatenate-one": lambda xp, a: xp.concatenate([a]),  # a copy
    "hstack-one": lambda xp, a: xp.hstack([a]),  # a copy
    "conjugate-method": lambda xp, a: a.conjugate(),  # a itself (real dtype)
    "conj-method": lambda xp, a: a.conj(),  # a itself (real dtype)
    "conj-function": lambda xp, a: xp.conj(a),  # a copy (a ufunc)
    "einsum-identity": lambda xp, a: xp.einsum("ij->ij", a),  # a view
    "einsum-transpose": lambda xp, a: xp.einsum("ij->ji", a),  # a view
    "einsum-implicit-transpose": lambda xp, a: xp.einsum("ji", a),  # a view
    "einsum-ellipsis-transpose": lambda xp, a: xp.einsum("...ij->...ji", a),  # a view
    "einsum-reduction-copy": lambda xp, a: xp.einsum("ij->i", a),  # a copy
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_or_copy_as_numpy(name):
    """Write through the derived array, then into the base: each must see the other's write
    exactly when NumPy's does."""
    def f(xp, x):
        a = x.copy()
        v = VIEWS[name](xp, a)
        v[(0,) * v.ndim] = -1.0
        a[0, 0] = -2.0
        a[1, 1] = x[2, 3]
        return a * 1.0, v * 1.0
    check(f, M)


# views NumPy makes read-only (or that vecgrad cannot write through): a later write into the
# base shows through them
READ_VIEWS = {
    "diagonal": lambda xp, a: xp.diagonal(a),
    "diagonal-offset": lambda xp, a: xp.diagonal(a, -1),
    "diag": lambda xp, a: xp.diag(a),
    "diagonal-method": lambda xp, a: a.diagonal(1),
    "einsum-diagonal": lambda xp, a: xp.einsum("ii->i", a),
    "einsum-diagonal-ellipsis": lambda xp, a: xp.einsum("...ii->...i", a[None]),
    "broadcast_to": lambda xp, a: xp.broadcast_to(a, (2, 4, 4)),
    "sliding_window_view": lambda xp, a: xp.lib.stride_tricks.sliding_window_view(a, 2, 0),
}


@pytest.mark.parametrize("name", list(READ_VIEWS))
def test_read_only_view_sees_later_writes_into_its_base(name):
    def f(xp, x):
        a = x.copy()
        v = READ_VIEWS[name](xp, a)
        a[0, 0] = -2.0
        a[1, 1] = x[2, 3]
        a[2:, 1:] *= 3.0
        return v * 1.0
    check(f, M)


def test_write_through_einsum_diagonal_view_names_the_limit():
    def write(x):
        a = x.copy()
        d = vnp.einsum("ii->i", a)
        d[0] = 1.0
        return a
    with pytest.raises(ReadOnlyError, match="vecgrad cannot write through it"):
        vg.jit(write)(M)


def test_writes_and_reads_through_views_gradient():
    def f(xp, x):
        a = xp.zeros((4, 4))
        a[:] = x
        for i in range(4):
            t = a[i, i]
            a[i, i] = a[i, (i + 1) % 4]
            a[i, (i + 1) % 4] = t
        col = a[:, 0].reshape(2, 2)
        col *= x[:2, :2]
        return a
    check(f, M)


def test_element_reads_are_getitems_not_views():
    def f(x):
        return x[0]
    out = vg.api.trace_graph(f, (X,))
    assert [e.prim for e in out.eqns] == [P.getitem]


def test_reshape_copy_false_raises_where_numpy_must_copy():
    def f(x):
        a = x.copy()
        return vnp.reshape(a.T, (16,), copy=False)
    with pytest.raises(ValueError, match="copy"):
        vg.jit(f)(M)
    with pytest.raises(ValueError, match="copy"):
        np.reshape(M.T, (16,), copy=False)


def test_write_through_a_traced_boolean_mask():
    def f(xp, x):
        a = x.copy()
        a[a < 0] = 0.0  # relu by mask
        b = x.copy()
        b[b[:, 0] > 0] = x[0]  # whole rows, a row value
        c = x.copy()
        c[x > 1] = x[1, 1]  # a traced scalar
        return a, b, c
    check(f, M)


def test_write_through_a_traced_mask_with_a_selection_sized_value_raises():
    def f(x):
        a = x.copy()
        a[a > 0] = vnp.zeros(3)
        return a
    with pytest.raises(vg.TraceError, match="traced"):
        vg.jit(f)(M)


def test_c_contiguity_shortcut_agrees_with_the_strided_stand_in():
    from vecgrad.inputs import new_input
    from vecgrad.ir import Aval
    from vecgrad.tracing import Builder, c_contiguous, strided
    r = np.random.default_rng(5)
    keys = [(1,), (1, 2), (slice(1, 3),), (1, slice(0, 4)), (1, slice(1, 3)),
            (slice(None), 1), (slice(0, 2), slice(1, 3)), (slice(None, None, 2),),
            (None, 1), (1, None, slice(2, 4)), (slice(2, 3), slice(1, 3)), (Ellipsis, 0),
            (slice(1, 2), 0), (0, slice(0, 1), slice(0, 5)), (0, 0, slice(None, None, -1))]
    with Builder() as b:
        x = new_input(Aval((3, 4, 5), np.dtype(np.float64)), b)
        for key in keys + [tuple(r.choice([0, slice(0, 2), slice(None)], 3)) for _ in range(30)]:
            v = x[key]
            assert c_contiguous(v) == bool(strided(v).flags.c_contiguous), key


_X = np.arange(6.0).reshape(2, 3)
_Y = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("expr", [
    "x.T.copy(order='K').ravel(order='K')", "x.T.copy(order='F').ravel(order='A')",
    "x.copy(order='F').ravel(order='K')", "y.transpose(1, 2, 0).copy('K').ravel('K')",
    "x.copy('F').reshape(3, 2, order='A')", "np.copy(x.T, order='K').ravel('K')",
    "(x.T * 2).ravel(order='K')", "np.sin(x.T).ravel('K')", "x.T.copy().ravel('K')",
    "y[:, ::-1].copy('K').ravel('K')", "x.T.copy('A').ravel('A')",
    "np.exp(y.transpose(2, 1, 0)).ravel('K')",
])
def test_memory_order_of_copies_and_results_as_numpy(expr):
    """NumPy keeps an F-ordered copy (or ufunc result) F-ordered, and ravel(order='K') or
    reshape(order='A') reads that order (they read C order: a silent wrong answer)."""
    f = eval(f"lambda x, y: {expr}")
    np.testing.assert_array_equal(vg.jit(f)(_X, _Y), f(_X, _Y))


def test_a_ravel_of_an_f_ordered_copy_is_its_view():
    def f(x):
        c = x.T.copy("F")
        r = c.ravel("K")  # (NumPy: a view of c, in c's memory order)
        r[0] = 9.0
        return c
    np.testing.assert_array_equal(vg.jit(f)(_X), f(_X))
    g = vg.grad(lambda x: np.sum(x.T.copy("F").ravel("K") * np.arange(6.0)))(_X)
    np.testing.assert_array_equal(g, np.arange(6.0).reshape(2, 3))
