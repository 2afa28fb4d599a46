"""Complex numbers under JAX's convention, for every primitive.

A VJP is the transpose of the JVP under the real pairing <a, b> = Re(sum(a * b)) (no
conjugation): for holomorphic f, vjp(ct) = ct * f'(z); |z| gives g * conj(z) / |z|; real,
imag and conj give g, -1j * g and conj(ct). Every spec's primitive is checked with complex
inputs (all of them complex, and each one alone complex next to real ones) against central
differences in random complex directions:

    Re(sum(vjp(ct) * t)) == Re(sum(ct * (f(z + eps t) - f(z - eps t)) / (2 eps)))

Comparisons, maximum and max/min reductions take complex numbers in NumPy's lexicographic
order (checked here like every other primitive, their values against NumPy's in
test_complex_order.py). The fused softmax family, which has no complex meaning, must refuse
complex input with ComplexError; others may refuse it with ComplexError too (scipy.special's),
never compute a wrong gradient.
"""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from test_primitives import SPECS, one_eqn_graph

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.autodiff import vjp_graph
from vecgrad.backends import compile_graph
from vecgrad.errors import ComplexError
from vecgrad.ir import Aval, typecheck

ORDERED = {"softmax", "softmax_vjp", "logsumexp"}
# decompositions whose complex vectors are defined up to a phase each (eigh, svd; eig always):
# their gradients are checked through phase-invariant functions in test_linalg
PHASE = {"eigh", "svd", "eig"}


def _complexify(spec, shapes, which, seed=0):
    """The spec's inputs with those in `which` made complex: x + 1j * y, y drawn from the same
    domain (so log, sqrt, ... stay off their branch cuts)."""
    xs = spec.make(np.random.default_rng(seed), shapes)
    ys = spec.make(np.random.default_rng(seed + 100), shapes)
    return [x + 1j * y if i in which else x for i, (x, y) in enumerate(zip(xs, ys))]


def _refuses_mixed(spec, args):
    """x[idx] += v with complex v into a real x: NumPy cannot cast the sum back (TypeError)."""
    return spec.name == "setitem_add" and not np.iscomplexobj(args[0]) \
        and np.iscomplexobj(args[1])


def _complex_cases():
    out = []
    for s in SPECS:
        if s.name in ORDERED or getattr(s, "no_grad", False):
            continue
        args = s.make(np.random.default_rng(0), s.shapes)
        floats = [i for i, a in enumerate(args) if a.dtype.kind == "f"]
        if not floats:
            continue
        label = f"{s.name}-{s.label}" if s.label else s.name
        subsets = [tuple(floats)] + ([(i,) for i in floats] if len(floats) > 1 else [])
        for which in subsets:
            out.append(pytest.param(s, which, id=f"{label}-complex{list(which)}"))
    return out


def _weights(r, out):
    w = r.standard_normal(np.shape(out))
    return w + 1j * r.standard_normal(np.shape(out)) if np.iscomplexobj(out) else w


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # (setitem z into x)
@pytest.mark.parametrize("spec,which", _complex_cases())
def test_complex_vjp_matches_central_differences(spec, which):
    shapes = spec.shapes
    args = _complexify(spec, shapes, which)
    params = spec.params_for(shapes)
    try:  # a typed refusal of complex input is allowed (scipy.special's functions)
        spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params)
    except ComplexError:
        return
    except TypeError:
        pass
    if _refuses_mixed(spec, args):
        with pytest.raises(TypeError, match="complex"):
            spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        try:
            want = np.asarray(spec.ref(*args))
        except TypeError:  # NumPy refuses complex input (floor, hypot, ...): so must vecgrad
            with pytest.raises(TypeError):
                spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params)
            return
    out = np.asarray(spec.prim.impl(*args, **params))
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-12)
    assert spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params) == \
        Aval(out.shape, out.dtype)
    wrt = spec.diff_inputs([a.real if np.iscomplexobj(a) else a for a in args])
    if not wrt:
        return
    r = np.random.default_rng(1)
    ct = _weights(r, out)
    if spec.name in PHASE:
        return
    gg = typecheck(vjp_graph(one_eqn_graph(spec.prim, args, params), wrt))
    res = compile_graph(gg).fn(*args, np.asarray(ct, out.dtype))
    np.testing.assert_allclose(res[0], out, rtol=1e-12)
    cts = dict(zip(wrt, res[1:]))
    for i, c in cts.items():
        assert c.shape == args[i].shape and c.dtype == args[i].dtype, (c.dtype, args[i].dtype)

    def f(xs):
        return np.asarray(spec.prim.impl(*xs, **params))
    for _ in range(2):
        dirs = {i: _weights(r, args[i]) for i in wrt}
        shifted = [[a + s * spec.eps * dirs[i] if i in dirs else a for i, a in enumerate(args)]
                   for s in (1, -1)]
        fd = float(np.real(np.sum(ct * (f(shifted[0]) - f(shifted[1])))) / (2 * spec.eps))
        analytic = sum(float(np.real(np.sum(cts[i] * dirs[i]))) for i in wrt)
        assert analytic == pytest.approx(fd, rel=spec.tol, abs=1e-8)


@pytest.mark.parametrize("name", sorted(ORDERED))
def test_ordered_primitives_refuse_complex_input(name):
    spec = next(s for s in SPECS if s.name == name)
    args = _complexify(spec, spec.shapes, range(len(spec.shapes)))
    with pytest.raises(ComplexError, match="not defined for complex input"):
        spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args],
                             **spec.params_for(spec.shapes))


def test_every_primitive_is_checked_with_complex_input_or_refuses_it():
    checked = {p.values[0].name for p in _complex_cases()}
    no_float_input = {s.name for s in SPECS
                      if not any(a.dtype.kind == "f" for a in s.make(np.random.default_rng(0),
                                                                     s.shapes))}
    no_grad = {s.name for s in SPECS if getattr(s, "no_grad", False)}
    missing = set(P.REGISTRY) - checked - ORDERED - no_float_input - no_grad
    assert not missing, f"primitives without a complex check: {sorted(missing)}"


# ------------------------------------------------------------------------- end to end

Z = np.array([3 + 4j, 1 - 2j, -0.5 + 0.1j, 2j])


def test_grad_of_abs_squared_is_jax_convention():
    g = vg.grad(lambda z: vnp.abs(z) ** 2)(np.array(3 + 4j))
    assert g == pytest.approx(6 - 8j)  # jax.grad(lambda z: abs(z)**2)(3+4j)
    np.testing.assert_allclose(vg.grad(lambda z: vnp.sum(vnp.abs(z) ** 2))(Z), 2 * np.conj(Z))


def test_abs_vjp_at_zero_is_jax_convention():
    """g conj(z) / |z|, with 0 at z = 0 (as jax.grad); complex64 stays complex64."""
    z = np.array([0j, 3 + 4j, -2j, 1e-30 + 0j])
    want = np.array([0, 0.6 - 0.8j, 1j, 1])  # jax.grad(lambda z: jnp.sum(jnp.abs(z)))(z)
    for dt in (np.complex128, np.complex64):
        zz = z.astype(dt)
        g = vg.grad(lambda z: vnp.sum(vnp.abs(z)))(zz)
        assert g.dtype == dt
        np.testing.assert_allclose(g, want.astype(dt), rtol=1e-6)
        np.testing.assert_array_equal(vg.jit(vnp.abs)(zz), np.abs(zz))


def test_abs_vjp_matches_jax_at_zero_and_elsewhere(jax):
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    z = np.array([0j, 3 + 4j, -2j, 0.5 - 1e-3j])
    for f in (lambda xp, z: xp.sum(xp.abs(z) ** 3), lambda xp, z: xp.sum(xp.abs(z * z + 1))):
        np.testing.assert_allclose(vg.grad(lambda z, f=f: f(vnp, z))(z),
                                   jax.grad(lambda z, f=f: f(jnp, z))(z), rtol=1e-12)


def test_abs_vjp_of_complex_input_needs_no_sign():
    """sign(z) costs ~30 times abs(z); the rfft power's backward was mostly that. With the
    conj rules its backward is abs, real products and one complex product."""
    x = np.random.default_rng(0).standard_normal((4, 16))
    loss = lambda x: vnp.sum(vnp.abs(vnp.fft.rfft(x)) ** 2)
    np.testing.assert_allclose(vg.grad(loss)(x), _rfft_power_grad(x), rtol=1e-6, atol=1e-6)
    text = vg.show(loss, x, file=io.StringIO())
    final = text.split("=== final")[1].split("=== generated")[0]
    assert "sign" not in final and "conj" not in final, final


def _rfft_power_grad(x):
    """Central differences of sum(|rfft(x)|^2), coordinate by coordinate."""
    f = lambda x: np.sum(np.abs(np.fft.rfft(x)) ** 2)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        g[i] = (f(x + e) - f(x - e)) / 2e-6
    return g


def test_linalg_norm_of_a_complex_vector():
    assert vg.jit(lambda z: vnp.linalg.norm(z))(Z) == pytest.approx(np.linalg.norm(Z))
    np.testing.assert_allclose(vg.grad(lambda z: vnp.linalg.norm(z))(Z),
                               np.conj(Z) / np.linalg.norm(Z))
    m = Z.reshape(2, 2)
    assert vg.jit(lambda z: vnp.linalg.norm(z, "fro"))(m) == pytest.approx(np.linalg.norm(m))


COMPOSITIONS = {
    "abs-exp": lambda xp, z: xp.sum(xp.abs(xp.exp(z))),
    "abs-sin-mul": lambda xp, z: xp.sum(xp.abs(xp.sin(z) * z)),
    "real-dot": lambda xp, z: xp.real(xp.dot(z, z[::-1])),
    "imag-einsum": lambda xp, z: xp.sum(xp.imag(xp.einsum("i,j->ij", z, xp.conj(z)))),
    "angle-div": lambda xp, z: xp.sum(xp.angle(z / (z + 2))),
    "abs-pow-sqrt": lambda xp, z: xp.sum(xp.abs(xp.sqrt(z) ** 3)),
    "norm-log": lambda xp, z: xp.linalg.norm(xp.log(z)),
    "real-times-imag": lambda xp, z: xp.sum(xp.real(z) * xp.imag(z)),
    "conj-product": lambda xp, z: xp.real(xp.sum(z * xp.conj(z))),
    "abs-prod": lambda xp, z: xp.abs(xp.prod(z)),
    "abs-tanh-mean": lambda xp, z: xp.abs(xp.mean(xp.tanh(z))),
    "abs-of-real-input": lambda xp, z: xp.sum(xp.abs(xp.real(z) * (1 + 2j))),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_complex_compositions_match_autograd(name, autograd_np):
    import autograd
    f = COMPOSITIONS[name]
    got = vg.value_and_grad(lambda z: f(vnp, z))(Z)
    want = autograd.value_and_grad(lambda z: f(autograd_np, z))(Z)
    assert got[0] == pytest.approx(want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_complex_compositions_match_central_differences(name):
    f = COMPOSITIONS[name]
    g = vg.grad(lambda z: f(vnp, z))(Z)
    r = np.random.default_rng(2)
    for _ in range(3):
        t = r.standard_normal(Z.shape) + 1j * r.standard_normal(Z.shape)
        eps = 1e-6
        fd = (f(np, Z + eps * t) - f(np, Z - eps * t)) / (2 * eps)
        assert float(np.real(np.sum(g * t))) == pytest.approx(float(fd), rel=1e-6, abs=1e-8)


def test_vjp_with_a_complex_cotangent():
    out, vjp = vg.vjp(lambda z: vnp.exp(z) * 2.0, Z)
    np.testing.assert_allclose(out, np.exp(Z) * 2)
    ct = np.array([1 + 1j, 2, -1j, 0.5])
    (g,) = vjp(ct)
    np.testing.assert_allclose(g, ct * 2 * np.exp(Z))  # ct * f'(z), no conjugation


def test_real_input_of_a_complex_function_gets_the_real_part():
    x = np.array([0.3, -1.2, 2.0])
    g = vg.grad(lambda x: vnp.sum(vnp.abs(vnp.exp(1j * x) * (2 + x))))(x)
    np.testing.assert_allclose(g, np.ones(3))  # |e^{ix} (2 + x)| = 2 + x
    assert g.dtype == np.float64


def test_writes_through_real_and_imag_views():
    def f(xp, z):
        z = z.copy()
        r = z.real
        r[0] = 7.0
        z.imag[1] = -3.0
        return xp.sum(xp.abs(z) ** 2)
    assert vg.jit(lambda z: f(vnp, z))(Z) == pytest.approx(f(np, Z))
    g = vg.grad(lambda z: f(vnp, z))(Z)
    want = 2 * np.conj(Z)
    want[0] = -2j * Z[0].imag  # the real part was overwritten: only Im z0 matters
    want[1] = 2 * Z[1].real
    np.testing.assert_allclose(g, want)


def test_complex_to_real_astype_warns_like_numpy():
    with pytest.warns(np.exceptions.ComplexWarning):
        out = vg.jit(lambda z: z.astype(np.float64))(Z)
    np.testing.assert_array_equal(out, Z.real)


def test_imag_of_a_real_array_is_read_only_zeros():
    def f(x):
        i = vnp.imag(x * 2)
        i[0] = 1.0
        return i
    with pytest.raises(vg.ReadOnlyError, match="imaginary part"):
        vg.jit(f)(np.ones(3))


@pytest.mark.parametrize("fn", [lambda z: vg.nn.softmax(z), lambda z: vg.nn.logsumexp(z),
                                lambda z: vg.nn.relu(z), lambda z: vg.nn.softplus(z),
                                lambda z: vnp.histogram(z)[0]])
def test_ordered_operations_on_complex_raise(fn):
    with pytest.raises(ComplexError, match=r"test_complex\.py"):
        vg.jit(fn)(Z)


def test_check_grads_with_complex_arguments():
    vg.check_grads(lambda z: vnp.sum(vnp.abs(vnp.sin(z)) ** 2), [Z])
    vg.check_grads(lambda z, x: vnp.abs(vnp.sum(z * x)), [Z, np.arange(4.0)], argnums=(0, 1))


def test_grad_of_a_complex_output_raises_as_jax():
    with pytest.raises(TypeError, match="real-valued output"):
        vg.grad(lambda z: vnp.sum(z * z))(Z)
    with pytest.raises(TypeError, match="real-valued output"):
        vg.grad(lambda x: vnp.sum(x * 1j))(np.ones(3))
    with pytest.raises(TypeError, match="real-valued output"):
        vg.value_and_grad(lambda z: vnp.sum(vnp.exp(z)))(Z)
