"""vg.vmap, with jax.vmap's conventions: the mapped function equals stacking the function's
results instance by instance, for every in_axes/out_axes form, inside other transformations,
and its gradient matches central differences."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

RNG = np.random.default_rng(0)
W = RNG.normal(size=(4, 3))
XS = RNG.normal(size=(6, 3))
YS = RNG.normal(size=(6, 4))


def layer(W, x):
    h = vnp.zeros(4)
    for i in range(4):  # a loop inside the mapped function: batched by the forward passes
        h[i] = vnp.tanh(W[i] @ x)
    return h


def loss(W, x, y):
    return vnp.sum((vnp.tanh(W @ x) - y) ** 2)


def stacked(f, *args_per_instance):
    return np.stack([np.asarray(f(*a)) for a in zip(*args_per_instance)])


def test_maps_a_loop_over_one_argument():
    out = vg.vmap(layer, in_axes=(None, 0))(W, XS)
    np.testing.assert_allclose(out, stacked(lambda x: layer(W, x), XS), rtol=1e-13)


@pytest.mark.parametrize("ax", [0, 1, -1, -2])
def test_in_axes_and_out_axes_move_the_mapped_axis(ax):
    A = RNG.normal(size=(3, 5, 2))
    f = vg.vmap(lambda a: vnp.sin(a) * 2, in_axes=ax, out_axes=ax)
    np.testing.assert_allclose(f(A), np.sin(A) * 2, rtol=1e-14)
    g = vg.vmap(lambda a: vnp.sum(a ** 2), in_axes=ax)
    np.testing.assert_allclose(g(A), (A ** 2).sum(axis=tuple(i for i in range(3)
                                                           if i != ax % 3)), rtol=1e-13)


def test_pytree_arguments_prefix_specs_and_kwargs():
    p = {"w": RNG.normal(size=(5, 2)), "b": RNG.normal(size=5)}
    s = np.arange(5.0)
    out = vg.vmap(lambda p, s=1.0: vnp.sum(p["w"]) * s + p["b"])(p, s=s)
    np.testing.assert_allclose(out, p["w"].sum(1) * s + p["b"], rtol=1e-14)
    q = {"w": RNG.normal(size=(5, 2)), "b": np.ones(2)}
    out = vg.vmap(lambda q: q["w"] * q["b"], in_axes=({"w": 0, "b": None},))(q)
    np.testing.assert_allclose(out, q["w"] * q["b"])
    pair = (XS, [YS, YS.T])
    out = vg.vmap(lambda t: t[0].sum() + t[1][0].sum() + t[1][1].sum(),
                  in_axes=((0, [0, 1]),))(pair)
    np.testing.assert_allclose(out, XS.sum(1) + 2 * YS.sum(1), rtol=1e-13)


def test_tuple_results_unmapped_outputs_and_out_axes_none():
    a, c = vg.vmap(lambda x, c: (x * 2, c + 1), in_axes=(0, None), out_axes=(1, None))(XS, W)
    np.testing.assert_allclose(a, (XS * 2).T)
    np.testing.assert_allclose(c, W + 1)
    a, c = vg.vmap(lambda x, c: (x * 2, c + 1), in_axes=(0, None))(XS, W)
    np.testing.assert_allclose(c, np.broadcast_to(W + 1, (6,) + W.shape))
    n = vg.vmap(lambda: vnp.ones(2), axis_size=3)()
    np.testing.assert_allclose(n, np.ones((3, 2)))


def test_nested_vmap_is_a_pairwise_table():
    pair = vg.vmap(vg.vmap(lambda a, b: vnp.dot(a, b), in_axes=(None, 0)), in_axes=(0, None))
    np.testing.assert_allclose(pair(XS, XS), XS @ XS.T, rtol=1e-13)


def test_per_example_gradients():
    pe = vg.vmap(vg.grad(loss), in_axes=(None, 0, 0))
    np.testing.assert_allclose(pe(W, XS, YS), stacked(lambda x, y: vg.grad(loss)(W, x, y),
                                                      XS, YS), rtol=1e-12)


def test_gradient_through_vmap_matches_central_differences():
    def f(W, xs, ys):
        return vnp.sum(vg.vmap(layer, in_axes=(None, 0))(W, xs) * ys)
    vg.check_grads(f, (W, XS, YS), argnums=(0, 1))

    def closing_over(W, xs):  # the mapped function closes over a traced value
        return vnp.sum(vg.vmap(lambda x: vnp.exp(W @ x))(xs))
    vg.check_grads(closing_over, (W, XS), argnums=(0, 1))


def test_mapped_gathers_solves_and_comprehensions():
    table = RNG.normal(size=(10, 3))
    idx = RNG.integers(0, 10, size=7)
    np.testing.assert_allclose(vg.vmap(lambda i: vnp.take(table, i, axis=0) * 2)(idx),
                               table[idx] * 2)
    A = RNG.normal(size=(6, 3, 3)) + 3 * np.eye(3)
    b = RNG.normal(size=(6, 3))
    np.testing.assert_allclose(vg.vmap(vnp.linalg.solve)(A, b),
                               np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-12)
    f = vg.vmap(lambda x: sum(x[i] * x[i + 1] for i in range(2)))
    np.testing.assert_allclose(f(XS), XS[:, 0] * XS[:, 1] + XS[:, 1] * XS[:, 2], rtol=1e-14)


def test_a_vmapped_loss_is_one_batched_program():
    def f(W, xs):
        return vnp.sum(vg.vmap(lambda x: loss(W, x, x[:1].repeat(4)))(xs))
    small, _ = vg.grad(f).entry(W, XS[:2])
    big, _ = vg.grad(f).entry(W, np.tile(XS, (50, 1)))
    # one trace of one instance, however many instances: the same program at any size
    assert small.counts == big.counts and big.counts["traced"] < 20


@pytest.mark.parametrize("call, msg", [
    (lambda: vg.vmap(lambda a, b: a + b)(XS, XS[:3]), "different sizes"),
    (lambda: vg.vmap(lambda a: a, in_axes=None)(XS), "axis_size"),
    (lambda: vg.vmap(lambda a: a, in_axes=2)(XS), "axis 2 of an array of shape"),
    (lambda: vg.vmap(lambda a: a, in_axes=(0, 0))(XS), "2 entries"),
    (lambda: vg.vmap(lambda a: a, out_axes=None)(XS), "out_axes=None"),
    (lambda: vg.vmap(lambda a: a, in_axes="0")(XS), "must be an int"),
    (lambda: vg.vmap(lambda p: p, in_axes=({"w": 0},))({"v": XS}), "does not match"),
    (lambda: vg.vmap(3), "expects a function"),
    (lambda: vg.vmap(lambda x, s: x * s)(XS, 2.0), "Python number 2.0"),
    (lambda: vg.vmap(lambda x: x)(np.float64(2.0)), r"shape \(\) \(rank 0\)"),
])
def test_typed_errors_name_the_user_line(call, msg):
    with pytest.raises(vg.ArgumentError, match=msg) as info:
        call()
    assert "test_vmap.py" in str(info.value)


def test_mapping_the_same_function_again_compiles_nothing_new():
    f = vg.vmap(layer, in_axes=(None, 0))
    f(W, XS)
    e1, _ = f.compiled.entry(W, XS)
    e2, _ = vg.vmap(layer, in_axes=(None, 0)).compiled.entry(W, XS)
    assert e1 is e2
    e3, _ = vg.vmap(layer, in_axes=(None, 1)).compiled.entry(W, XS.T)
    assert e3 is not e1
    np.testing.assert_allclose(vg.vmap(layer, in_axes=(None, 1))(W, XS.T), f(W, XS))
