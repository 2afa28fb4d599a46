"""Regression tests for the bugs that HIPS autograd's examples exposed (run through
bench/autograd_suite/examples.py). Each is a small program in the example's style, in several
variants: values against NumPy/SciPy, gradients against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(0)


# -- ode_net.py: odeint's extra arguments are a pytree (a network's list of (W, b) layers) --

def _net(y, t, params):
    for W, b in params:
        out = vnp.dot(y, W) + b
        y = vnp.tanh(out)
    return out


def _net_np(y, t, params):
    for W, b in params:
        out = np.dot(y, W) + b
        y = np.tanh(out)
    return out


@pytest.mark.parametrize("container", ["list_of_tuples", "dict", "nested_with_number"])
def test_odeint_args_pytree_of_parameters(container):
    si = pytest.importorskip("scipy.integrate")
    import vecgrad.scipy.integrate as vint
    layers = [(R.standard_normal((2, 5)) * 0.5, R.standard_normal(5) * 0.1),
              (R.standard_normal((5, 2)) * 0.5, R.standard_normal(2) * 0.1)]
    if container == "list_of_tuples":
        args, rhs, rhs_np = (layers,), _net, _net_np
    elif container == "dict":
        args = ({"l0": layers[0], "l1": layers[1]},)
        rhs = lambda y, t, p: _net(y, t, [p["l0"], p["l1"]])
        rhs_np = lambda y, t, p: _net_np(y, t, [p["l0"], p["l1"]])
    else:  # a Python number next to the arrays, and a time-dependent system
        args = (layers, 0.3)
        rhs = lambda y, t, p, k: _net(y, t, p) - k * t * y
        rhs_np = lambda y, t, p, k: _net_np(y, t, p) - k * t * y
    y0, t = np.array([1.0, -0.5]), np.linspace(0.0, 1.0, 5)
    want = si.odeint(rhs_np, y0, t, args=args, rtol=1e-10, atol=1e-10)
    got = vint.odeint(rhs, y0, t, args, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    w = R.standard_normal((5, 2))

    def loss(a, y0):
        return vnp.sum(vint.odeint(rhs, y0, t, a, rtol=1e-11, atol=1e-11) * w)
    np.testing.assert_allclose(vg.jit(loss)(args, y0), np.sum(want * w), rtol=1e-6)
    vg.check_grads(loss, [args, y0], argnums=(0, 1), eps=1e-5, rtol=1e-4, atol=1e-6)


# -- bayesian_neural_net.py: einsum broadcasts an axis of size 1 against the same label ------

@pytest.mark.parametrize("spec,sa,sb", [
    ("mnd,mdo->mno", (1, 7, 3), (4, 3, 5)),  # the example: one input set, 4 weight samples
    ("mnd,mdo->mno", (4, 7, 3), (1, 3, 5)),
    ("ij,jk->ik", (2, 1), (3, 4)),  # a contracted axis of size 1 is broadcast, then summed
    ("ij,ij->", (2, 1), (2, 3)),
    ("ij,kj->ik", (1, 1), (2, 3)),
    ("...ij,...jk->...ik", (1, 2, 3), (4, 3, 2)),
    ("bi,bi->b", (1, 3), (5, 3)),
])
def test_einsum_broadcasts_size_one_axes(spec, sa, sb):
    a, b = R.standard_normal(sa), R.standard_normal(sb)
    want = np.einsum(spec, a, b)
    np.testing.assert_allclose(vnp.einsum(spec, a, b), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vg.jit(lambda a, b: vnp.einsum(spec, a, b))(a, b), want,
                               rtol=1e-12, atol=1e-12)
    vg.check_grads(lambda a, b: vnp.sum(vnp.sin(vnp.einsum(spec, a, b))), [a, b],
                   argnums=(0, 1))


def test_einsum_incompatible_sizes_still_raise():
    with pytest.raises(vg.ShapeError, match="broadcast"):
        vnp.einsum("ij,jk->ik", np.ones((2, 2)), np.ones((3, 4)))


# -- fluidsim.py / wing.py: f[rows, cols] with several traced integer index arrays ----------

_X = R.standard_normal((4, 5, 3))
_I, _J, _K = R.integers(-4, 4, (2, 6)), R.integers(-5, 5, (6,)), R.integers(0, 3, (2, 6))
_GATHERS = {
    "rows_cols": lambda x, i, j, k: x[i, j],
    "three": lambda x, i, j, k: x[i, j, k],
    "slice_first": lambda x, i, j, k: x[:, j, k],
    "separated": lambda x, i, j, k: x[i, :, k],  # NumPy puts the broadcast axes first
    "with_int": lambda x, i, j, k: x[i, 0],
    "ellipsis": lambda x, i, j, k: x[..., j, k],
    "with_static_array": lambda x, i, j, k: x[i, np.array([0, 1, 2, 3, 4, 0])],
}


@pytest.mark.parametrize("name", sorted(_GATHERS))
def test_gather_with_several_traced_index_arrays(name):
    f = _GATHERS[name]
    want = f(_X, _I, _J, _K)
    got = vg.jit(f)(_X, _I, _J, _K)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want)
    w = R.standard_normal(want.shape)
    vg.check_grads(lambda x: vnp.sum(vnp.sin(f(x, _I, _J, _K)) * w), [_X])


def test_bilinear_interpolation_as_in_fluidsim():
    """The semi-Lagrangian advection step: a weighted sum of the 4 surrounding cells."""
    def advect(f, vx, vy):
        rows, cols = f.shape
        ys, xs = vnp.meshgrid(vnp.arange(rows), vnp.arange(cols))
        cx, cy = xs - vx, ys - vy
        left, top = vnp.floor(cx).astype(int), vnp.floor(cy).astype(int)
        rw, bw = cx - left, cy - top
        left, top = vnp.mod(left, rows), vnp.mod(top, cols)
        right, bot = vnp.mod(left + 1, rows), vnp.mod(top + 1, cols)
        out = (1 - rw) * ((1 - bw) * f[left, top] + bw * f[left, bot]) + \
            rw * ((1 - bw) * f[right, top] + bw * f[right, bot])
        return vnp.reshape(out, (rows, cols))

    def advect_np(f, vx, vy):
        rows, cols = f.shape
        ys, xs = np.meshgrid(np.arange(rows), np.arange(cols))
        cx, cy = xs - vx, ys - vy
        left, top = np.floor(cx).astype(int), np.floor(cy).astype(int)
        rw, bw = cx - left, cy - top
        left, top = np.mod(left, rows), np.mod(top, cols)
        right, bot = np.mod(left + 1, rows), np.mod(top + 1, cols)
        out = (1 - rw) * ((1 - bw) * f[left, top] + bw * f[left, bot]) + \
            rw * ((1 - bw) * f[right, top] + bw * f[right, bot])
        return np.reshape(out, (rows, cols))
    f, vx, vy = (R.standard_normal((6, 6)), R.uniform(-2, 2, (6, 6)), R.uniform(-2, 2, (6, 6)))
    np.testing.assert_allclose(vg.jit(advect)(f, vx, vy), advect_np(f, vx, vy), rtol=1e-12)
    loss = lambda f, vx, vy: vnp.sum(advect(advect(f, vx, vy), vy, vx) ** 2)
    vg.check_grads(loss, [f, vx, vy], argnums=(0, 1, 2))


def test_gather_out_of_bounds_raises_index_error():
    with pytest.raises(IndexError):
        vg.jit(lambda x, i, j: x[i, j])(_X, np.array([1]), np.array([5]))


@pytest.mark.parametrize("shape,nidx", [((4, 5), 2), ((3, 4, 2), 2), ((3, 4, 2), 3)])
def test_add_at_with_several_traced_index_arrays(shape, nidx):
    idx = tuple(R.integers(0, n, 12) for n in shape[:nidx])
    v = R.standard_normal((12,) + shape[nidx:])

    def acc(v, *idx):
        buf = vnp.zeros(shape)
        vnp.add.at(buf, idx, v)
        return buf
    want = np.zeros(shape)
    np.add.at(want, idx, v)
    np.testing.assert_allclose(vg.jit(acc)(v, *idx), want, rtol=1e-12)
    vg.check_grads(lambda v: vnp.sum(acc(v, *idx) ** 2), [v])


def test_constant_array_indexed_by_traced_index_says_what_to_do():
    """fluidsim.py advects a constant image with traced indices (f[left, top]): NumPy's
    indexing of a plain array cannot dispatch to vecgrad, so the error names the fix, and the
    fix it names computes NumPy's values and gradients."""
    c = R.standard_normal((5, 6))
    x = R.uniform(0, 4.9, 7)

    def bad(x):
        i = vnp.floor(x).astype(int)
        return vnp.sum(c[i, i] * x)
    with pytest.raises(vg.TracedIntoNumpyError, match="ravel_multi_index"):
        vg.grad(bad)(x)

    def good(x):
        i = vnp.floor(x).astype(int)
        return vnp.sum(vnp.take(c, vnp.ravel_multi_index((i, i), c.shape)) * x)
    i = np.floor(x).astype(int)
    np.testing.assert_allclose(vg.jit(good)(x), np.sum(c[i, i] * x))
    np.testing.assert_allclose(vg.grad(good)(x), c[i, i])


# -- black_box_svi.py, mixture_variational_inference.py, bayesian_neural_net.py: their
# objectives, with the noise passed as an argument (drawing it inside is a RandomStateError) --

def _svi_objective(params, eps, D):
    import vecgrad.scipy.stats as vst
    mean, log_std = params[:D], params[D:]
    samples = eps * vnp.exp(log_std) + mean
    mu, log_sigma = samples[:, 0], samples[:, 1]
    logp = vst.norm.logpdf(log_sigma, 0, 1.35) + vst.norm.logpdf(mu, 0, vnp.exp(log_sigma))
    entropy = 0.5 * D * (1.0 + vnp.log(2 * vnp.pi)) + vnp.sum(log_std)
    return -(entropy + vnp.mean(logp))


@pytest.mark.parametrize("n", [1, 50])
def test_black_box_svi_objective_with_noise_argument(n):
    st = pytest.importorskip("scipy.stats")
    params, eps = R.standard_normal(4) * 0.3, R.standard_normal((n, 2))
    s = eps * np.exp(params[2:]) + params[:2]
    want = -(0.5 * 2 * (1 + np.log(2 * np.pi)) + params[2:].sum() + np.mean(
        st.norm.logpdf(s[:, 1], 0, 1.35) + st.norm.logpdf(s[:, 0], 0, np.exp(s[:, 1]))))
    np.testing.assert_allclose(vg.jit(lambda p, e: _svi_objective(p, e, 2))(params, eps), want,
                               rtol=1e-12)
    vg.check_grads(lambda p: _svi_objective(p, eps, 2), [params])


def test_mixture_elbo_style_logsumexp_of_stacked_components():
    import vecgrad.scipy.special as vsp
    sp = pytest.importorskip("scipy.special")
    k, D, n = 3, 2, 20
    x = R.standard_normal((n, D))

    def log_density(mix, x, lib, lse):
        log_w = mix[:k] - lse(mix[:k])
        var = lib.reshape(mix[k:], (k, -1))
        comps = lib.vstack([lib.sum(-0.5 * ((x - p[:D]) / lib.exp(p[D:])) ** 2 - p[D:], axis=1)
                            for p in var]).T
        return lse(comps + log_w, axis=1)
    mix = R.standard_normal(k + k * 2 * D) * 0.5
    want = log_density(mix, x, np, sp.logsumexp)
    got = vg.jit(lambda m: log_density(m, x, vnp, vsp.logsumexp))(mix)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    vg.check_grads(lambda m: vnp.sum(log_density(m, x, vnp, vsp.logsumexp)), [mix])
