"""vecgrad.scipy end to end: special functions and distributions against SciPy's values, their
gradients against central differences, SciPy ufuncs dispatched from traced code, and the
arguments without a gradient raising instead of giving zeros."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

sc = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")
vsp = pytest.importorskip("vecgrad.scipy.special")
vst = pytest.importorskip("vecgrad.scipy.stats")

R = np.random.default_rng(0)


def pos(*s):
    return R.standard_normal(s) ** 2 + 1.1


def check(fn, ref, args, argnums):
    """fn (vecgrad) against ref (SciPy) in value, and grad of a random weighting of it (of
    each result, when there are several)."""
    want = ref(*args)
    got = vg.jit(fn)(*args)
    tup = isinstance(want, tuple)
    for g_, w_ in zip(got if tup else (got,), want if tup else (want,)):
        np.testing.assert_allclose(g_, w_, rtol=1e-9, atol=1e-12)
    rng = np.random.default_rng(1)
    ws = [rng.standard_normal(np.shape(w_)) for w_ in (want if tup else (want,))]

    def loss(*xs):
        out = fn(*xs)
        return sum(vnp.sum(o * w) for o, w in zip(out if tup else (out,), ws))
    vg.check_grads(loss, args, argnums=argnums, rtol=1e-5, atol=1e-8)

# --------------------------------------------------------------------------- special

UNARY = [("gammaln", pos), ("digamma", pos), ("psi", pos), ("gamma", pos), ("rgamma", pos),
         ("erf", None), ("erfc", None), ("expit", None), ("ndtr", None), ("log_ndtr", None),
         ("j0", pos), ("j1", pos), ("y0", pos), ("y1", pos), ("i0", None), ("i1", None),
         ("i0e", None), ("i1e", None), ("exp1", pos), ("expi", pos), ("entr", pos)]


@pytest.mark.parametrize("name,gen", UNARY, ids=[u[0] for u in UNARY])
def test_unary_special(name, gen):
    x = gen(3, 4) if gen else R.standard_normal((3, 4))
    check(getattr(vsp, name), getattr(sc, name), [x], 0)


@pytest.mark.parametrize("name,lo,hi", [("erfinv", -0.9, 0.9), ("erfcinv", 0.1, 1.9),
                                        ("logit", 0.1, 0.9), ("ndtri", 0.05, 0.95)])
def test_inverse_functions(name, lo, hi):
    check(getattr(vsp, name), getattr(sc, name), [R.uniform(lo, hi, (5,))], 0)


@pytest.mark.parametrize("name,first,argnums", [
    ("polygamma", np.array([0, 1, 2]), (1,)), ("jv", 2.5, (1,)), ("jn", 2, (1,)),
    ("yv", 1.5, (1,)), ("yn", 2, (1,)), ("iv", 2.0, (1,)), ("ive", 3.5, (1,)),
    ("gammainc", 1.7, (1,)), ("gammaincc", 0.8, (1,)), ("zeta", 3.0, (1,)),
    ("stdtr", 3.5, (1,)), ("beta", None, (0, 1)), ("betaln", None, (0, 1)),
    ("xlogy", None, (0, 1)), ("xlog1py", None, (0, 1)), ("rel_entr", None, (0, 1)),
    ("kl_div", None, (0, 1))])
def test_binary_special(name, first, argnums):
    x = pos(3)
    a = pos(3) if first is None else first
    check(getattr(vsp, name), getattr(sc, name), [a, x], argnums)


def test_betainc_gradient_in_x():
    args = [pos(4), pos(4), R.uniform(0.1, 0.9, 4)]
    check(vsp.betainc, sc.betainc, args, (2,))


def test_xlogy_at_zero_is_zero_with_scipys_gradients():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 0.5])
    np.testing.assert_array_equal(vg.jit(vsp.xlogy)(x, y), sc.xlogy(x, y))
    gx, gy = vg.grad(lambda x, y: vnp.sum(vsp.xlogy(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [0.0, np.log(3.0), np.log(0.5)])
    np.testing.assert_allclose(gy, [0.0, 0.0, 4.0])


def test_multigammaln_and_factorial():
    for d in (1, 2, 3):
        check(lambda a, d=d: vsp.multigammaln(a, d), lambda a, d=d: sc.multigammaln(a, d),
              [R.uniform(4.0, 5.0, (2, 3))], 0)
    check(vsp.factorial, sc.factorial, [np.array([0.5, 2.0, 3.5])], 0)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (0, 1, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(axis, keepdims):
    a, b = R.standard_normal((2, 3, 4)), np.exp(R.standard_normal((2, 3, 4)))
    check(lambda a: vsp.logsumexp(a, axis, keepdims=keepdims),
          lambda a: sc.logsumexp(a, axis, keepdims=keepdims), [a], 0)
    check(lambda a, b: vsp.logsumexp(a, axis, b, keepdims),
          lambda a, b: sc.logsumexp(a, axis, b, keepdims), [a, b], (0, 1))
    b2 = R.standard_normal((2, 3, 4))  # negative weights: the sign comes back separately
    got = vg.jit(lambda a, b: vsp.logsumexp(a, axis, b, keepdims, return_sign=True))(a, b2)
    want = sc.logsumexp(a, axis, b2, keepdims, return_sign=True)
    for g_, w_ in zip(got, want):
        np.testing.assert_allclose(g_, w_, rtol=1e-10)


def test_logsumexp_of_large_and_infinite_values():
    a = np.array([[1000.0, 1000.0], [-np.inf, -np.inf]])
    np.testing.assert_allclose(vg.jit(lambda a: vsp.logsumexp(a, 1))(a), sc.logsumexp(a, 1))
    np.testing.assert_allclose(vg.jit(lambda a: vsp.logsumexp(a, 1, b=np.ones(2)))(a),
                               sc.logsumexp(a, 1, b=np.ones(2)))


def test_softmax_log_softmax():
    a = R.standard_normal((3, 4))
    for axis in (None, 0, 1):
        check(lambda a, ax=axis: vsp.softmax(a, ax), lambda a, ax=axis: sc.softmax(a, ax), [a], 0)
        check(lambda a, ax=axis: vsp.log_softmax(a, ax),
              lambda a, ax=axis: sc.log_softmax(a, ax), [a], 0)


@pytest.mark.parametrize("fn,args,argnum,what", [
    (vsp.gammainc, (1.5, 2.0), 0, "gammainc with respect to a"),
    (vsp.betainc, (1.5, 2.0, 0.3), 1, "betainc with respect to b"),
    (vsp.jv, (1.5, 2.0), 0, "jv with respect to the order"),
    (vsp.stdtr, (3.0, 0.5), 0, "stdtr with respect to df"),
    (lambda df, x: vst.t.cdf(x, df), (3.0, 0.5), 0, "stdtr with respect to df"),
])
def test_arguments_without_a_gradient_raise(fn, args, argnum, what):
    args = [np.float64(a) for a in args]
    with pytest.raises(vg.VecgradError, match=what):
        vg.grad(lambda *xs: vnp.sum(fn(*xs)), argnums=argnum)(*args)
    vg.grad(lambda *xs: vnp.sum(fn(*xs)), argnums=len(args) - 1)(*args)  # the other one works


def test_scipy_ufuncs_on_traced_arrays_dispatch():
    def f(x):
        return np.sum(sc.gammaln(x) + sc.erf(x) * sc.expit(x) + sc.jn(2, x) + sc.xlogy(x, x))
    x = pos(5)
    np.testing.assert_allclose(vg.jit(f)(x), f(x), rtol=1e-12)
    vg.check_grads(f, [x])


def test_scipy_ufunc_without_traced_version_raises():
    with pytest.raises(NotImplementedError, match="spence"):
        vg.jit(lambda x: sc.spence(x))(pos(3))


def test_import_vecgrad_does_not_import_scipy():
    code = "import sys, vecgrad, vecgrad.numpy, vecgrad.scipy.special, vecgrad.scipy.stats; " \
           "print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- stats

def _dist_cases():
    x, u, k = R.standard_normal(4), R.uniform(0.05, 0.95, 4), np.array([0.0, 1.0, 2.0, 5.0])
    yield "norm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], [x, R.standard_normal(4),
                                                                       pos(4)], (0, 1, 2)
    yield "norm", ["ppf", "isf"], [u, 0.3, 1.7], (0,)
    yield "t", ["logpdf", "pdf"], [x, pos(4) + 1, R.standard_normal(4), pos(4)], (0, 1, 2, 3)
    yield "t", ["cdf", "logcdf", "sf", "logsf"], [x, pos(4) + 1, R.standard_normal(4),
                                                  pos(4)], (0, 2, 3)
    yield "beta", ["logpdf", "pdf"], [u, pos(4), pos(4)], (0, 1, 2)
    yield "beta", ["cdf", "logcdf", "sf", "logsf"], [u, pos(4), pos(4)], (0,)
    yield "gamma", ["logpdf", "pdf"], [pos(4), pos(4)], (0, 1)
    yield "gamma", ["cdf", "logcdf", "sf", "logsf"], [pos(4), pos(4)], (0,)
    yield "chi2", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], [pos(4), 3.0], (0,)
    yield "chi2", ["logpdf", "pdf"], [pos(4), pos(4)], (0, 1)
    yield "poisson", ["logpmf", "pmf", "cdf"], [k, pos(4)], (1,)
    for d in ("expon", "laplace", "logistic"):
        yield d, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], [pos(4), 0.2, pos(4)], \
            (0, 1, 2)
    yield "uniform", ["logpdf", "pdf", "cdf", "sf"], [u, 0.0, 1.5], (0, 2)
    yield "bernoulli", ["logpmf", "pmf", "cdf"], [np.array([0.0, 1.0, 1.0]), u[:3]], (1,)
    yield "geom", ["logpmf", "pmf", "cdf"], [np.array([1.0, 2.0, 4.0]), u[:3]], (1,)


@pytest.mark.parametrize("dist,fns,args,argnums", list(_dist_cases()))
def test_distribution(dist, fns, args, argnums):
    args = [np.asarray(a, float) for a in args]
    for fn in fns:
        f, ref = getattr(getattr(vst, dist), fn), getattr(getattr(st, dist), fn)
        if fn.endswith("pmf") or dist in ("poisson", "bernoulli", "geom"):  # k is data
            f, ref = (lambda *a, f=f, k=args[0]: f(k, *a)), \
                (lambda *a, ref=ref, k=args[0]: ref(k, *a))
            check(f, ref, args[1:], tuple(i - 1 for i in argnums))
        else:
            check(f, ref, args, argnums)


def test_distributions_broadcast():
    x, loc, scale = R.standard_normal((4, 3)), R.standard_normal((1, 3)), pos(4, 1)
    for fn in ("logpdf", "cdf", "logsf"):
        check(getattr(vst.norm, fn), getattr(st.norm, fn), [x, loc, scale], (0, 1, 2))
    check(vst.t.logpdf, st.t.logpdf, [x, pos(1, 3) + 1, x * 0.5, scale], (0, 1, 2, 3))
    k = np.round(R.standard_normal((4, 3)) ** 2)
    check(lambda mu: vst.poisson.logpmf(k, mu), lambda mu: st.poisson.logpmf(k, mu),
          [pos(4, 1)], 0)


def test_out_of_support_and_invalid_parameters_match_scipy():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    for d, args in [("beta", (2.0, 3.0)), ("gamma", (2.0,)), ("expon", ()), ("uniform", ())]:
        for fn in ("logpdf", "pdf", "cdf"):
            f = getattr(getattr(vst, d), fn)
            got = vg.jit(lambda x, f=f, a=args: f(x, *a))(x)
            np.testing.assert_allclose(got, getattr(getattr(st, d), fn)(x, *args))
    np.testing.assert_array_equal(np.isnan(vst.norm.logpdf(x, 0.0, -1.0)), True)
    np.testing.assert_allclose(vst.poisson.logpmf(np.array([1.5, -1.0, 2.0]), 2.0),
                               st.poisson.logpmf(np.array([1.5, -1.0, 2.0]), 2.0))


def _psd(d):
    m = R.standard_normal((d, d))
    return m.T @ m + np.eye(d)


def _sym(c):
    return 0.5 * (c + vnp.swapaxes(c, -1, -2))


@pytest.mark.parametrize("xshape", [(4,), (5, 4), (2, 3, 4)])
def test_multivariate_normal(xshape):
    x, mean, cov = R.standard_normal(xshape), R.standard_normal(4), _psd(4)
    for fn in ("logpdf", "pdf"):
        check(lambda x, m, c, fn=fn: getattr(vst.multivariate_normal, fn)(x, m, _sym(c)),
              lambda x, m, c, fn=fn: getattr(st.multivariate_normal, fn)(x, m, c),
              [x, mean, cov], (0, 1, 2))
    # the cholesky reads cov's lower triangle, as scipy.stats does: exact without symmetrizing
    check(vst.multivariate_normal.logpdf, st.multivariate_normal.logpdf,
          [x, mean, cov + np.triu(R.standard_normal((4, 4)), 1)], (0, 1, 2))


def test_multivariate_normal_cov_forms_and_entropy():
    x, mean = R.standard_normal((3, 2)), R.standard_normal(2)
    for cov in (np.float64(2.5), np.array([1.5, 0.7])):
        check(vst.multivariate_normal.logpdf, st.multivariate_normal.logpdf, [x, mean, cov],
              (0, 1, 2))
    check(lambda m, c: vst.multivariate_normal.entropy(m, _sym(c)),
          lambda m, c: st.multivariate_normal.entropy(m, c), [10 * mean, _psd(2)], (0, 1))
    xs = R.standard_normal(5)  # one dimension: a vector of points
    check(lambda x: vst.multivariate_normal.logpdf(x, 0.5, 2.0),
          lambda x: st.multivariate_normal.logpdf(x, 0.5, 2.0), [xs], 0)


def test_multivariate_normal_singular_covariance():
    cov = np.zeros((4, 4))
    cov[0, 0] = cov[1, 1] = 1
    mean = np.concatenate((R.standard_normal(2), np.zeros(2)))

    def f(x, mean):
        x = vnp.concatenate([x[:2], mean[2:]])
        return vst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)

    def ref(x, mean):
        return st.multivariate_normal.logpdf(np.concatenate([x[:2], mean[2:]]), mean, cov,
                                             allow_singular=True)
    x = np.concatenate((R.standard_normal(2), np.zeros(2)))
    check(f, ref, [x, mean], (0, 1))
    off = np.array([0.1, 0.2, 0.3, 0.0])  # outside the support: -inf, as SciPy
    assert vst.multivariate_normal.logpdf(off, np.zeros(4), cov, allow_singular=True) == -np.inf
    with pytest.raises(vg.VecgradError, match="allow_singular"):
        vg.grad(lambda c: vst.multivariate_normal.logpdf(x, mean, c, allow_singular=True))(cov)


def test_dirichlet():
    alpha = R.random(4) ** 2 + 1.2
    x = st.dirichlet.rvs(alpha, size=1, random_state=1)[0]

    def normalized(fn):
        return lambda x, a: fn(x / vnp.sum(x), a)
    for fn in ("logpdf", "pdf"):
        check(normalized(getattr(vst.dirichlet, fn)),
              lambda x, a, fn=fn: getattr(st.dirichlet, fn)(x / x.sum(), a), [x, alpha], (0, 1))
    xs = st.dirichlet.rvs(alpha, size=3, random_state=2).T  # components first, as SciPy
    check(lambda a: vst.dirichlet.logpdf(xs, a), lambda a: st.dirichlet.logpdf(xs, a),
          [alpha], 0)
    check(lambda a: vst.dirichlet.logpdf(xs[:-1], a), lambda a: st.dirichlet.logpdf(xs, a),
          [alpha], 0)


# ----------------------------------------------------------------------------- linalg

sla = pytest.importorskip("scipy.linalg")
vla = pytest.importorskip("vecgrad.scipy.linalg")


def _wc(*s):
    return R.standard_normal(s) + 3 * np.eye(s[-1])


@pytest.mark.parametrize("lower", [False, True])
def test_cho_factor_cho_solve_cholesky(lower):
    a, b = _psd(4), R.standard_normal((4, 2))
    check(lambda a: vla.cho_factor(a, lower)[0], lambda a: sla.cho_factor(a, lower)[0], [a], 0)
    check(lambda a, b: vla.cho_solve(vla.cho_factor(a, lower), b),
          lambda a, b: sla.cho_solve(sla.cho_factor(a, lower), b), [a, b], (0, 1))
    check(lambda a: vla.cholesky(a, lower), lambda a: sla.cholesky(a, lower), [a], 0)


@pytest.mark.parametrize("assume_a", [None, "sym", "pos", "lower triangular",
                                      "upper triangular", "diagonal"])
@pytest.mark.parametrize("bshape", [(4,), (4, 3)])
def test_solve_assume_a(assume_a, bshape):
    a = _psd(4) if assume_a in ("sym", "pos") else _wc(4, 4)
    for lower in (False, True):
        for transposed in (False, True):
            if transposed and assume_a in ("sym", "pos"):
                continue
            kw = {"lower": lower, "assume_a": assume_a, "transposed": transposed}
            check(lambda a, b, kw=kw: vla.solve(a, b, **kw),
                  lambda a, b, kw=kw: sla.solve(a, b, **kw), [a, R.standard_normal(bshape)],
                  (0, 1))


def test_solve_banded_sylvester_expm():
    ab, b = R.standard_normal((3, 5)) + np.array([[0.0], [4.0], [0.0]]), R.standard_normal(5)
    check(lambda ab, b: vla.solve_banded((1, 1), ab, b),
          lambda ab, b: sla.solve_banded((1, 1), ab, b), [ab, b], (0, 1))
    check(lambda ab, b: vla.solve_banded((2, 0), ab, b),
          lambda ab, b: sla.solve_banded((2, 0), ab, b), [ab[::-1].copy(), b], (0, 1))
    a, bb, q = _wc(3, 3), _wc(3, 3), R.standard_normal((3, 3))
    check(vla.solve_sylvester, sla.solve_sylvester, [a, bb, q], (0, 1, 2))
    check(vla.expm, sla.expm, [R.standard_normal((2, 3, 3)) / 2], 0)


def test_decompositions_and_block_diag():
    a = R.standard_normal((5, 3))
    check(lambda a: vla.qr(a, mode="economic"), lambda a: sla.qr(a, mode="economic"), [a], 0)
    check(lambda a: vla.qr(a.T), lambda a: sla.qr(a.T), [a], 0)  # wide: 'full' is reduced
    check(lambda a: vla.svd(a, full_matrices=False), lambda a: sla.svd(a, full_matrices=False),
          [a], 0)
    # eigenvectors are defined up to sign (NumPy's and SciPy's LAPACK drivers differ)
    check(lambda a: vla.eigh(a @ a.T)[1] ** 2, lambda a: sla.eigh(a @ a.T)[1] ** 2, [a[:3]], 0)
    check(lambda a: vla.eigh(a @ a.T)[0], lambda a: sla.eigh(a @ a.T)[0], [a[:3]], 0)
    check(lambda a: vla.eigh(a, lower=False, eigvals_only=True),
          lambda a: sla.eigh(a, lower=False, eigvals_only=True), [_psd(3)], 0)
    check(lambda x, y: vla.block_diag(x, y, y[0]), lambda x, y: sla.block_diag(x, y, y[0]),
          [a, R.standard_normal((2, 2))], (0, 1))


# --------------------------------------------------------------------- integrate, signal

vint = pytest.importorskip("vecgrad.scipy.integrate")
vsig = pytest.importorskip("vecgrad.scipy.signal")
si = pytest.importorskip("scipy.integrate")
ssig = pytest.importorskip("scipy.signal")


def _rhs(y, t, arg1, arg2):  # autograd's test system, in plain NumPy calls
    return -np.sqrt(t) - y + arg1 - np.mean((y + arg2) ** 2)


def test_odeint_values_and_gradients():
    y0, t, args = R.standard_normal(3), np.linspace(0.1, 0.2, 4), (R.standard_normal(3),
                                                                  R.standard_normal(3))
    np.testing.assert_allclose(vg.jit(lambda y0, t, a: vint.odeint(_rhs, y0, t, a))(y0, t, args),
                               si.odeint(_rhs, y0, t, args), rtol=1e-10)
    w = R.standard_normal((4, 3))

    def loss(y0, t, a):
        return vnp.sum(vint.odeint(_rhs, y0, t, a, rtol=1e-12, atol=1e-12) * w)
    vg.check_grads(loss, [y0, t, args], argnums=(0, 1, 2), eps=1e-5, rtol=1e-5)
    tfirst = vg.jit(lambda y0, t, a: vint.odeint(lambda tt, y, a1, a2: _rhs(y, tt, a1, a2),
                                                 y0, t, a, tfirst=True))(y0, t, args)
    np.testing.assert_allclose(tfirst, si.odeint(_rhs, y0, t, args), rtol=1e-10)


def test_odeint_second_derivative():
    y0, t = R.standard_normal(2), np.linspace(0.0, 1.0, 3)

    def loss(y0):
        return vnp.sum(vint.odeint(lambda y, tt: -y * y + vnp.sin(tt), y0, t, rtol=1e-12,
                                   atol=1e-12) ** 2)
    g = vg.grad(loss)
    assert g(y0).shape == (2,)
    vg.check_grads(lambda y0: vnp.sum(g(y0) * np.array([1.0, -2.0])), [y0], eps=1e-4,
                   rtol=1e-5)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("shapes", [((6,), (3,)), ((3,), (6,)), ((5, 4), (3, 2)),
                                    ((4, 6), (2, 3))])
def test_convolve_correlate(mode, shapes):
    a, b = R.standard_normal(shapes[0]), R.standard_normal(shapes[1])
    for mine, ref in ((vsig.convolve, ssig.convolve), (vsig.correlate, ssig.correlate)):
        check(lambda a, b, f=mine: f(a, b, mode), lambda a, b, f=ref: f(a, b, mode), [a, b],
              (0, 1))
    if len(shapes[0]) == 2:
        check(lambda a, b: vsig.convolve2d(a, b, mode), lambda a, b: ssig.convolve2d(a, b, mode),
              [a, b], (0, 1))
        check(lambda a, b: vsig.correlate2d(a, b, mode),
              lambda a, b: ssig.correlate2d(a, b, mode), [a, b], (0, 1))


def test_convolve_autograd_generalization():
    a35, a34, a342 = R.standard_normal((3, 5)), R.standard_normal((3, 4)), \
        R.standard_normal((3, 4, 2))
    for mode in ("valid", "full"):
        np.testing.assert_allclose(vsig.convolve(a35, a34, axes=([1], [0]), mode=mode)[1, 2],
                                   ssig.convolve(a35[1, :], a34[:, 2], mode))
        np.testing.assert_allclose(
            vsig.convolve(a35, a342, axes=([1], [2]), dot_axes=([0], [0]), mode=mode)[2],
            sum(ssig.convolve(a35[i, :], a342[i, 2, :], mode) for i in range(3)))
    vg.check_grads(lambda a, b: vnp.sum(vsig.convolve(a, b, axes=([1], [2]),
                                                      dot_axes=([0], [0])) ** 2),
                   [a35, a342], argnums=(0, 1))


def test_sqrtm_and_its_gradient():
    a = _psd(3)
    x = vg.jit(vla.sqrtm)(a)
    assert x.dtype == np.complex128  # always complex, as jax.scipy.linalg.sqrtm
    np.testing.assert_allclose(x, sla.sqrtm(a), rtol=1e-10)
    sym = R.standard_normal((3, 3))
    sym = sym + sym.T  # negative eigenvalues: a complex root
    np.testing.assert_allclose(vg.jit(vla.sqrtm)(sym), sla.sqrtm(sym), rtol=1e-9)
    for m in (a, sym):
        vg.check_grads(lambda m: vnp.sum(vnp.abs(vla.sqrtm(_sym(m))) ** 2), [m])
    check(lambda a: vnp.real(vla.sqrtm(a)), lambda a: np.real(sla.sqrtm(a)), [a], 0)


def test_convolve_axes_in_any_order_and_ignored_axes():
    a, b = R.standard_normal((4, 3)), R.standard_normal((3, 2))
    for mode in ("full", "valid", "same"):
        np.testing.assert_allclose(vsig.convolve(a, b, axes=([1, 0], [1, 0]), mode=mode),
                                   vsig.convolve(a, b, mode=mode).T)
        out = vsig.convolve(a, b, axes=([0], [1]), mode=mode)  # ignored: a's 1, then b's 0
        for i in range(3):
            for j in range(3):
                np.testing.assert_allclose(out[i, j], ssig.convolve(a[:, i], b[j], mode))
        vg.check_grads(lambda a, b, m=mode: vnp.sum(vsig.convolve(a, b, axes=([0], [1]),
                                                                  mode=m) ** 2),
                       [a, b], argnums=(0, 1))


def test_per_sample_log_densities_batch_into_one_call():
    x, mu, c = R.standard_normal((20, 3)), R.standard_normal(3), _psd(3)

    def loop(x, mu, c):
        return sum(vst.multivariate_normal.logpdf(x[i], mu, c)
                   + vnp.sum(vst.norm.logpdf(x[i], mu, 2.0)) for i in range(x.shape[0]))

    def vec(x, mu, c):
        return vnp.sum(vst.multivariate_normal.logpdf(x, mu, c)) \
            + vnp.sum(vst.norm.logpdf(x, mu, 2.0))
    np.testing.assert_allclose(vg.jit(loop)(x, mu, c), vg.jit(vec)(x, mu, c), rtol=1e-10)
    for a, b in zip(vg.grad(loop, argnums=(0, 1, 2))(x, mu, c),
                    vg.grad(vec, argnums=(0, 1, 2))(x, mu, c)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    entry, _ = vg.grad(loop, argnums=(0, 1, 2)).entry(x, mu, c)
    names = [e.prim.name for e in entry.stages["batch"].eqns]
    assert names.count("cholesky") == 1 and names.count("triangular_solve") == 1
