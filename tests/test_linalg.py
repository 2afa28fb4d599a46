"""vecgrad.numpy.linalg end to end: values against NumPy, gradients against central
differences (vg.check_grads, float64, random directions), NumPy dispatch on traced arrays,
loops over matrices batched into one call (the primitives' own specs, second order included,
are in specs_linalg.py)."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import NoGradientError, ShapeError

R = np.random.default_rng(0)


def rand(*s):
    return R.standard_normal(s)


def wellcond(*s):
    return rand(*s) + 3 * np.eye(s[-1])


def spd(*s):
    x = rand(*s)
    return x @ np.swapaxes(x, -1, -2) / s[-1] + np.eye(s[-1])


def sym(a):
    """Autograd's symmetrizing wrapper: the symmetric matrix of a's lower triangle."""
    lo = vnp.tril(a) if hasattr(vnp, "tril") else a * np.tril(np.ones(a.shape[-2:]))
    return (lo + vnp.swapaxes(lo, -1, -2)) / 2.0


def _weights(shape, dtype, seed):
    r = np.random.default_rng(seed)
    w = r.standard_normal(shape)
    return w + 1j * r.standard_normal(shape) if np.dtype(dtype).kind == "c" else w


def weighted(f, seed=1):
    """A real loss of f's results: the sum of Re(sum(w * out)) with fixed random weights
    (complex ones for complex results)."""
    def loss(*xs):
        out = f(*xs)
        total = 0.0
        for k, o in enumerate(out if isinstance(out, tuple) else (out,)):
            t = vnp.sum(o * _weights(o.shape, o.dtype, seed + k))
            total = total + (vnp.real(t) if np.dtype(t.dtype).kind == "c" else t)
        return total
    return loss


def check(f, *args, argnums=0, seed=1):
    """Values of f against NumPy's f and its gradient (of a random weighting) against central
    differences; f is written once and called with np (eagerly) and vnp (traced)."""
    want = f(np, *args)
    got = vg.jit(lambda *xs: f(vnp, *xs))(*args)
    for g_, w_ in zip(got if isinstance(got, tuple) else (got,),
                      want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g_, w_, rtol=1e-10, atol=1e-10)
    vg.check_grads(weighted(lambda *xs: f(vnp, *xs), seed), args, argnums=argnums, rtol=1e-5,
                   atol=1e-7)


# ------------------------------------------------------------------------------ solves

@pytest.mark.parametrize("bshape", [(4,), (4, 3), (2, 4, 3), (1, 4, 2)])
def test_solve(bshape):
    a, b = wellcond(2, 4, 4) if len(bshape) > 2 else wellcond(4, 4), rand(*bshape)
    check(lambda m, a, b: m.linalg.solve(a, b), a, b, argnums=(0, 1))


def test_solve_broadcasts_batch_axes():
    a, b = wellcond(3, 1, 4, 4), rand(5, 4, 2)
    check(lambda m, a, b: m.linalg.solve(a, b), a, b, argnums=(0, 1))


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 2, 3, 3)])
def test_inv_det(shape):
    a = wellcond(*shape)
    check(lambda m, a: m.linalg.inv(a), a)
    check(lambda m, a: m.linalg.det(a), a)


@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_slogdet(scale):
    a = scale * rand(5, 5)
    check(lambda m, a: m.linalg.slogdet(a)[1], a)
    check(lambda m, a: tuple(m.linalg.slogdet(a)), a)
    check(lambda m, a: m.linalg.slogdet(a).logabsdet, rand(3, 4, 4))


def test_cholesky_reads_one_triangle():
    a = spd(5, 5) + np.triu(rand(5, 5), 1)
    check(lambda m, a: m.linalg.cholesky(a), a)
    b = spd(5, 5) + np.tril(rand(5, 5), -1)
    check(lambda m, a: m.linalg.cholesky(a, upper=True), b)


def test_cholesky_of_symmetrized_input_like_autograd():
    a = spd(2, 4, 4)
    vg.check_grads(lambda a: vnp.sum(vnp.linalg.cholesky(sym(a)) * np.arange(16.).reshape(4, 4)),
                   [a])
    # the reparameterization trick
    z = rand(4)
    vg.check_grads(lambda a: vnp.linalg.norm(vnp.linalg.cholesky(sym(a)) @ z), [spd(4, 4)])


def test_pinv():
    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        check(lambda m, a: m.linalg.pinv(a), rand(*shape))
    x = rand(5, 3)  # low rank: the rank of x^T x is locally constant
    check(lambda m, a: m.linalg.pinv(a.T @ a), x)


def test_triangular_solves_through_scipy_namespace():
    sla = pytest.importorskip("vecgrad.scipy.linalg")
    a, b = wellcond(4, 4), rand(4, 2)
    for lower in (True, False):
        for trans in (0, 1, "T", "N"):
            for unit in (False, True):
                def f(m, a, b, lower=lower, trans=trans, unit=unit):
                    if m is np:
                        import scipy.linalg
                        return scipy.linalg.solve_triangular(a, b, trans, lower, unit)
                    return sla.solve_triangular(a, b, trans, lower, unit)
                check(f, a, b, argnums=(0, 1))


# ----------------------------------------------------------------------- decompositions

@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo):
    a = rand(5, 5)
    check(lambda m, a: tuple(m.linalg.eigh(a, uplo)), a)
    check(lambda m, a: m.linalg.eigvalsh(a, uplo), rand(2, 3, 4, 4))


def test_eigh_of_symmetrized_input_like_autograd():
    mat = rand(2, 3, 5, 5) + 10 * np.eye(5)
    h = np.einsum("...ij,...kj->...ik", mat, mat)
    vg.check_grads(lambda a: vnp.sum(vnp.linalg.eigh(sym(a))[1] * np.arange(25.).reshape(5, 5))
                   + vnp.sum(vnp.linalg.eigh(sym(a))[0] ** 2), [h])


def test_eigenvalue_gradient_at_repeated_eigenvalues_is_finite():
    # the eigenvectors of a repeated eigenvalue are not unique, but functions of the
    # eigenvalues alone have a gradient, and eigh's rule must not produce nan for them
    a = np.diag([1.0, 2.0, 2.0, 3.0])
    g = vg.grad(lambda a: vnp.sum(vnp.linalg.eigh(a)[0] ** 2))(a)
    np.testing.assert_allclose(g, np.diag([2.0, 4.0, 4.0, 6.0]), atol=1e-12)
    g2 = vg.grad(lambda a: vnp.sum(vnp.linalg.eigvalsh(a) ** 2))(a)
    np.testing.assert_allclose(g2, g, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 5), (2, 5, 3)])
def test_svd(shape):
    a = rand(*shape)
    check(lambda m, a: tuple(m.linalg.svd(a, full_matrices=False)), a)
    check(lambda m, a: m.linalg.svd(a, compute_uv=False), a)
    check(lambda m, a: m.linalg.svdvals(a), a)


def test_svd_full_matrices():
    check(lambda m, a: tuple(m.linalg.svd(a)), rand(4, 4))  # square: full is reduced
    u, s, vh = vg.jit(lambda a: vnp.linalg.svd(a))(rand(5, 3))
    assert u.shape == (5, 5) and s.shape == (3,) and vh.shape == (3, 3)
    with pytest.raises(NoGradientError, match="full_matrices"):
        vg.grad(lambda a: vnp.sum(vnp.linalg.svd(a)[0]))(rand(5, 3))
    with pytest.raises(NoGradientError, match="full_matrices=False"):  # as JAX and autograd
        vg.grad(lambda a: vnp.sum(vnp.linalg.svd(a)[1]))(rand(5, 3))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 5), (2, 5, 3)])
def test_qr(shape):
    a = rand(*shape)
    check(lambda m, a: tuple(m.linalg.qr(a)), a)
    check(lambda m, a: m.linalg.qr(a, mode="r"), a)


def test_qr_complete():
    check(lambda m, a: tuple(m.linalg.qr(a, mode="complete")), rand(3, 5))
    with pytest.raises(NoGradientError, match="complete"):
        vg.grad(lambda a: vnp.sum(vnp.linalg.qr(a, mode="complete")[0]))(rand(5, 3))


def test_named_results():
    a = spd(3, 3)
    r = vg.jit(lambda a: vnp.linalg.eigh(a))(a)
    assert type(r).__name__ == "EighResult"
    np.testing.assert_allclose(r.eigenvalues, np.linalg.eigh(a).eigenvalues)
    assert vnp.linalg.svd(a).Vh.shape == (3, 3) and vnp.linalg.qr(a).R.shape == (3, 3)
    assert vnp.linalg.slogdet(a).sign == 1.0


# ------------------------------------------------------------------------------- norms

ORDS_VEC = [None, 1, 2, 3, 0.5, -1, np.inf, -np.inf]
ORDS_MAT = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", ORDS_VEC)
def test_vector_norms(ord):
    x = rand(6) + np.sign(rand(6)) * 0.5
    check(lambda m, x: m.linalg.norm(x, ord), x)
    y = rand(3, 4, 5)
    for axis in (0, 1, -1, (2,)):
        for kd in (False, True):
            check(lambda m, y, axis=axis, kd=kd: m.linalg.norm(y, ord, axis, kd), y)


@pytest.mark.parametrize("ord", ORDS_MAT)
def test_matrix_norms(ord):
    check(lambda m, x: m.linalg.norm(x, ord), rand(5, 4))
    y = rand(3, 4, 5)
    for axis in ((0, 1), (2, 0), (-1, -2)):
        for kd in (False, True):
            check(lambda m, y, axis=axis, kd=kd: m.linalg.norm(y, ord, axis, kd), y)


def test_norm_zero_ord_and_errors():
    x = np.array([0.0, 1.5, 0.0, -2.0])
    assert vg.jit(lambda x: vnp.linalg.norm(x, 0))(x) == 2.0
    with pytest.raises(ValueError, match="Invalid norm order"):
        vnp.linalg.norm(x, "fro")
    with pytest.raises(ValueError, match="Improper number"):
        vnp.linalg.norm(rand(2, 2, 2), 2)
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        vnp.linalg.norm(rand(2, 2), 3)


def test_norm_of_whole_array_keepdims():
    check(lambda m, y: m.linalg.norm(y, keepdims=True), rand(2, 3, 4))


def test_vector_and_matrix_norm_namesakes():
    y = rand(3, 4, 5)
    check(lambda m, y: m.linalg.vector_norm(y), y)
    check(lambda m, y: m.linalg.vector_norm(y, axis=(0, 2), ord=3), y)
    check(lambda m, y: m.linalg.matrix_norm(y, ord="nuc", keepdims=True), y)
    check(lambda m, y: m.linalg.cond(y[:, :4, :4]), y)
    check(lambda m, y: m.linalg.cond(y[:, :4, :4], "fro"), y)


# ---------------------------------------------------------------- composed functions

@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    check(lambda m, a: m.linalg.matrix_power(a, n), wellcond(2, 3, 3) / 3)


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 5), (5, 2)], [(4,), (4, 6), (6, 2), (2,)],
                                    [(3,), (3, 7), (7, 2), (2, 9)], [(3, 2), (2,)]])
def test_multi_dot(shapes):
    arrs = [rand(*s) for s in shapes]
    check(lambda m, *xs: m.linalg.multi_dot(list(xs)), *arrs, argnums=tuple(range(len(arrs))))


def test_tensorsolve_tensorinv():
    a = wellcond(6, 6).reshape(2, 3, 6)
    check(lambda m, a, b: m.linalg.tensorsolve(a, b), a, rand(2, 3), argnums=(0, 1))
    a2 = wellcond(6, 6).reshape(6, 2, 3)
    check(lambda m, a: m.linalg.tensorinv(a, ind=1), a2)


def test_lstsq_and_rank():
    a, b = rand(6, 3), rand(6, 2)
    x, res, rank, s = vg.jit(lambda a, b: vnp.linalg.lstsq(a, b))(a, b)
    want = np.linalg.lstsq(a, b)
    for got, w in zip((x, res, rank, s), want):
        np.testing.assert_allclose(got, w, rtol=1e-10)
    vg.check_grads(lambda a, b: vnp.sum(vnp.linalg.lstsq(a, b)[0] ** 2), [a, b], argnums=(0, 1))
    low = rand(5, 2) @ rand(2, 4)
    assert vg.jit(vnp.linalg.matrix_rank)(low) == 2 == np.linalg.matrix_rank(low)


def test_diagonal_trace_namesakes():
    y = rand(2, 4, 5)
    for k in (-2, 0, 1, 3):
        check(lambda m, y, k=k: m.linalg.diagonal(y, offset=k), y)
        check(lambda m, y, k=k: m.linalg.trace(y, offset=k), y)
    check(lambda m, y: m.linalg.vecdot(y, y[0]), y)
    check(lambda m, y: m.linalg.matrix_transpose(y), y)


# ------------------------------------------------------- NumPy dispatch, batching, errors

def test_numpy_linalg_calls_on_traced_arrays_dispatch():
    a, b = wellcond(4, 4), rand(4)

    def f(a, b):
        x = np.linalg.solve(a, b)
        w, _ = np.linalg.eigh(a @ a.T)
        return np.linalg.norm(x) + np.linalg.det(a) + np.sum(w) + np.linalg.slogdet(a)[1] \
            + np.linalg.norm(np.linalg.inv(a), "nuc") + np.sum(np.linalg.qr(a)[1])

    def ref(a, b):
        return f(a, b)
    np.testing.assert_allclose(vg.jit(f)(a, b), ref(a, b), rtol=1e-10)
    vg.check_grads(f, [a, b], argnums=(0, 1))


def test_loop_over_matrices_batches_into_one_call():
    a, b = wellcond(6, 3, 3), rand(6, 3)

    def loop(a, b):
        total = 0.0
        for i in range(a.shape[0]):
            total = total + vnp.sum(vnp.linalg.solve(a[i], b[i]) ** 2) \
                + vnp.linalg.slogdet(a[i])[1] + vnp.sum(vnp.linalg.eigvalsh(a[i]))
        return total

    def vec(a, b):
        return vnp.sum(vnp.linalg.solve(a, b[..., None]) ** 2) + vnp.sum(vnp.linalg.slogdet(a)[1]) \
            + vnp.sum(vnp.linalg.eigvalsh(a))
    np.testing.assert_allclose(vg.jit(loop)(a, b), vg.jit(vec)(a, b), rtol=1e-10)
    for x, y in zip(vg.grad(loop, argnums=(0, 1))(a, b), vg.grad(vec, argnums=(0, 1))(a, b)):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
    entry, _ = vg.grad(loop, argnums=(0, 1)).entry(a, b)
    prims = [e.prim.name for e in entry.stages["batch"].eqns]
    assert prims.count("solve") == 1 and prims.count("eigvalsh") == 1


@pytest.mark.parametrize("rhs", [(3,), (3, 2)], ids=["vector", "matrix"])
def test_loop_solving_one_shared_matrix_factors_it_once(rhs):
    # S shared by every iteration: one solve with the sides side by side, S not broadcast
    S, X, mu = wellcond(3, 3), rand(7, *rhs), rand(*rhs)

    def loop(S, X, mu):
        return sum(vnp.sum((x - mu) * vnp.linalg.solve(S, x - mu)) for x in X)

    def ref(S, X, mu):
        D = X - mu
        sol = np.linalg.solve(S, np.moveaxis(D, 0, -1).reshape(3, -1)).reshape(
            np.moveaxis(D, 0, -1).shape)
        return np.sum(D * np.moveaxis(sol, -1, 0))
    np.testing.assert_allclose(vg.jit(loop)(S, X, mu), ref(S, X, mu), rtol=1e-12)
    vg.check_grads(loop, [S, X, mu], argnums=(0, 1, 2))
    entry, _ = vg.grad(loop, argnums=(0, 1, 2)).entry(S, X, mu)
    solves = [e for e in entry.stages["final"].eqns if e.prim.name == "solve"]
    assert len(solves) == 2 and all(e.inputs[0].aval.shape == (3, 3) for e in solves)


def test_shape_errors_name_the_user_line():
    with pytest.raises(ShapeError, match="square") as e:
        vg.jit(lambda a: vnp.linalg.inv(a))(rand(3, 4))
    assert "test_linalg.py" in str(e.value)
    with pytest.raises(ShapeError, match="at least two-dimensional"):
        vg.jit(lambda a: vnp.linalg.det(a))(rand(3))


def test_integer_input_is_computed_in_float64():
    a = np.array([[2, 1], [1, 3]])
    np.testing.assert_allclose(vg.jit(vnp.linalg.inv)(a), np.linalg.inv(a))
    assert vg.jit(vnp.linalg.det)(a).dtype == np.float64


def test_float32_stays_float32():
    a = wellcond(3, 3).astype(np.float32)
    assert vg.jit(vnp.linalg.inv)(a).dtype == np.float32
    assert vg.grad(lambda a: vnp.linalg.slogdet(a)[1])(a).dtype == np.float32


# --------------------------------------------------------------------- complex matrices

def crand(*s):
    return R.standard_normal(s) + 1j * R.standard_normal(s)


def hpd(*s):
    x = crand(*s)
    return x @ np.conj(np.swapaxes(x, -1, -2)) / s[-1] + np.eye(s[-1])


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh_through_phase_invariant_functions(uplo):
    a = crand(5, 5)  # Hermitian matrix of one triangle: the diagonal's imaginary part unread
    w, v = vg.jit(lambda a: tuple(vnp.linalg.eigh(a, uplo)))(a)
    ww, vv = np.linalg.eigh(a, uplo)
    assert w.dtype == np.float64
    np.testing.assert_allclose(w, ww, rtol=1e-10)
    np.testing.assert_allclose(np.abs(v), np.abs(vv), rtol=1e-8, atol=1e-12)
    vg.check_grads(weighted(lambda a: (vnp.linalg.eigh(a, uplo)[0],
                                        vnp.abs(vnp.linalg.eigh(a, uplo)[1]))), [a])
    # the projector onto the two largest eigenvectors is phase invariant too
    def projector(a):
        v = vnp.linalg.eigh(a, uplo)[1][:, 3:]
        return v @ vnp.conj(v).T
    vg.check_grads(weighted(projector), [hpd(5, 5)])
    vg.check_grads(weighted(lambda a: vnp.linalg.eigvalsh(a, uplo)), [crand(2, 4, 4)])


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 3, 5)])
def test_complex_svd_through_phase_invariant_functions(shape):
    a = crand(*shape)
    u, s, vh = vg.jit(lambda a: tuple(vnp.linalg.svd(a, full_matrices=False)))(a)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    assert s.dtype == np.float64
    np.testing.assert_allclose(u * s[..., None, :] @ vh, a, atol=1e-10)

    def invariant(a):
        u, s, vh = vnp.linalg.svd(a, full_matrices=False)
        # abs(U), abs(Vh), and U Vh (the phases cancel): autograd's and more
        return vnp.abs(u), s, vnp.abs(vh), u @ vh
    vg.check_grads(weighted(invariant), [a])
    vg.check_grads(weighted(lambda a: vnp.linalg.svd(a, compute_uv=False)), [a])
    vg.check_grads(weighted(lambda a: vnp.linalg.norm(a, "nuc", axis=(-2, -1))), [a])


@pytest.mark.parametrize("real", [True, False])
def test_eig_through_phase_invariant_functions(real):
    a = wellcond(5, 5) if real else crand(5, 5) + 3 * np.eye(5)
    c = (lambda x: x.astype(complex)) if real else (lambda x: x)  # (see the test below)
    w, v = vg.jit(lambda a: tuple(c(x) for x in vnp.linalg.eig(a)))(a)
    ww, vv = np.linalg.eig(a)
    assert w.dtype == np.complex128
    np.testing.assert_allclose(w, ww, rtol=1e-10)
    np.testing.assert_allclose(np.abs(v), np.abs(vv), rtol=1e-8, atol=1e-12)
    vg.check_grads(weighted(lambda a: (c(vnp.linalg.eig(a)[0]), vnp.abs(vnp.linalg.eig(a)[1]))),
                   [a])
    vg.check_grads(weighted(lambda a: vnp.linalg.eigvals(a)), [crand(2, 4, 4)])


SYM = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])  # real eigenvalues
ROT = np.array([[0.0, -1.0, 0.0], [1.0, 0.5, 0.0], [0.0, 0.0, 2.0]])  # a complex pair


@pytest.mark.parametrize("expr", [
    "np.linalg.eigvals(a).real", "np.abs(np.linalg.eigvals(a))", "np.linalg.eigvals(a).imag ** 2",
    "np.linalg.eigvals(a).astype(complex)", "np.sort(np.linalg.eigvals(a).real)",
    "np.linalg.eigvals(a)[0].real", "np.linalg.eigvals(a)[1:].imag", "np.linalg.eig(a)[1].real",
    "np.abs(np.linalg.eig(a)[1]).sum(0)", "np.max(np.abs(np.linalg.eigvals(a)))",
    "np.linalg.eigvals(a).T.real", "np.real(np.linalg.eigvals(a))",
    "np.stack([np.linalg.eigvals(a), np.ones(a.shape[0])]).real",
    "np.linalg.eigvals(np.stack([a, 2 * a])).real", "np.linalg.eigvals(a.astype(complex))",
    "np.angle(np.linalg.eigvals(a)) * 0.5"])
def test_eig_of_a_real_matrix_where_the_dtype_does_not_matter(expr):
    """np.linalg.eig / eigvals of a real matrix: NumPy's arrays are real where every
    eigenvalue is real, complex otherwise. Traced, they are complex with every use checked
    (valuedtype.EitherComplex): a use whose dtype is one in both cases, and indexing,
    transposes and stacks on the way to it, is NumPy's (before, the result was complex
    always, silently)."""
    f = eval(f"lambda a: {expr}", {"np": np})
    for a in (SYM, ROT):
        want, got = f(a), vg.jit(f)(a)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.sort_complex(np.ravel(got)), np.sort_complex(np.ravel(want)),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("expr", [
    "np.linalg.eigvals(a)", "np.linalg.eig(a)", "np.sort(np.linalg.eigvals(a))",
    "np.linalg.eigvals(a) * 2", "np.linalg.eigvals(a).sum()", "np.linalg.eig(a)[1] @ a",
    "np.linalg.eigvals(a) + np.linalg.eigvals(2 * a)", "np.array([np.linalg.eigvals(a)[0], 1.0])",
    "[np.linalg.eigvals(a)[i] for i in range(3)][0] + 1", "np.copy(np.linalg.eigvals(a))",
    "np.linalg.eigvals(a).copy()", "np.linalg.eig(a)[1] @ np.linalg.eig(a)[1]",
    "a @ np.linalg.eig(a)[1]", "np.dot(np.linalg.eigvals(a), np.ones(3))",
    "np.linalg.eigvals(a).reshape(3, 1)", "np.asarray(np.linalg.eigvals(a))"])
def test_eig_of_a_real_matrix_where_the_dtype_depends_on_the_values_is_refused(expr):
    """Returned, or used where the result's dtype differs in the two cases (arithmetic,
    np.sort, a product, np.array of a list), np.linalg.eig of a real matrix is refused with
    a TraceError naming the user's line and .real / np.abs / .astype(complex)."""
    f = eval(f"lambda a: {expr}", {"np": np})
    for a in (SYM, ROT):
        with pytest.raises(vg.TraceError, match=r"astype\(complex\)") as e:
            vg.jit(f)(a)
        assert "test_linalg.py" in str(e.value) or "<string>" in str(e.value)


def test_eig_gradient_through_real_parts():
    """Gradients of the real parts of eigenvalues (a real spectrum) and of |w| are central
    differences'."""
    vg.check_grads(lambda a: vnp.sum(vnp.linalg.eigvals(a).real ** 2), [SYM + 0.1 * ROT])
    vg.check_grads(lambda a: vnp.sum(vnp.abs(vnp.linalg.eigvals(a))), [ROT + np.eye(3)])


def test_eig_of_real_matrix_gives_real_gradients():
    a = wellcond(4, 4)
    g = vg.grad(lambda a: vnp.sum(vnp.abs(vnp.linalg.eigvals(a)) ** 2))(a)
    assert g.dtype == np.float64
    vg.check_grads(lambda a: vnp.sum(vnp.abs(vnp.linalg.eigvals(a)) ** 2), [a])


def test_complex_factorizations_and_solves():
    a, b = hpd(4, 4) + np.triu(crand(4, 4), 1), crand(4, 2)
    for upper in (False, True):
        x = a if not upper else np.conj(a.T)  # the read triangle holds the Hermitian matrix
        check(lambda m, a, upper=upper: m.linalg.cholesky(a, upper=upper), x)
    check(lambda m, a: tuple(m.linalg.qr(a)), crand(5, 3))
    check(lambda m, a: m.linalg.qr(a, "r"), crand(3, 5))
    check(lambda m, a: m.linalg.pinv(a), crand(3, 4))
    check(lambda m, a: m.linalg.slogdet(a)[1], crand(4, 4))
    check(lambda m, a: tuple(m.linalg.slogdet(a)), crand(4, 4))
    check(lambda m, a, b: m.linalg.solve(a, b), crand(4, 4) + 3 * np.eye(4), b, argnums=(0, 1))
    check(lambda m, a: m.linalg.norm(a, 2), crand(3, 4))
    check(lambda m, a: m.linalg.vecdot(a, a[0]), crand(3, 4))


def test_complex_scipy_linalg():
    sla = pytest.importorskip("scipy.linalg")
    vla = pytest.importorskip("vecgrad.scipy.linalg")
    a, b = crand(4, 4) + 3 * np.eye(4), crand(4, 2)
    for trans in (0, 1, 2):
        for lower in (False, True):
            got = vg.jit(lambda a, b, t=trans, lo=lower: vla.solve_triangular(a, b, t, lo))(a, b)
            np.testing.assert_allclose(got, sla.solve_triangular(a, b, trans, lower), rtol=1e-10)
            vg.check_grads(weighted(lambda a, b, t=trans, lo=lower:
                                     vla.solve_triangular(a, b, t, lo)), [a, b], argnums=(0, 1))
    h = hpd(4, 4)
    for lower in (False, True):
        got = vg.jit(lambda h, b, lo=lower: vla.cho_solve(vla.cho_factor(h, lo), b))(h, b)
        np.testing.assert_allclose(got, sla.cho_solve(sla.cho_factor(h, lower), b), rtol=1e-10)
        for kind in ("her", "pos", "sym"):
            np.testing.assert_allclose(
                vg.jit(lambda h, b, lo=lower, k=kind: vla.solve(h, b, lower=lo, assume_a=k))(h, b),
                sla.solve(h, b, lower=lower, assume_a=kind), rtol=1e-10)
    vg.check_grads(weighted(lambda h, b: vla.cho_solve(vla.cho_factor(h), b)), [h, b],
                   argnums=(0, 1))
