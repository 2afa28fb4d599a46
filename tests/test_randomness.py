"""Random numbers drawn while tracing raise RandomStateError (naming the state and the user's
line) instead of freezing one sample into the compiled code."""
from __future__ import annotations

import functools
import random
import types

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

X = np.ones(3)
RNG = np.random.default_rng(0)
RS = np.random.RandomState(0)
MOD = types.ModuleType("noise_module")
MOD.rng = np.random.default_rng(9)


def _helper_noise(n):
    return RNG.normal(size=n)  # HELPER LINE


def _closure():
    g = np.random.default_rng(1)
    return lambda x: x + g.normal(size=3)


class _Model:
    def __init__(self):
        self.rng = np.random.default_rng(4)

    def loss(self, x):
        return vnp.sum(x + self.rng.normal(size=3))


DRAWS = {
    "np.random.normal": (lambda x: x + np.random.normal(size=3), "NumPy's global random state"),
    "np.random.rand-scalar": (lambda x: x * np.random.rand(), "NumPy's global"),
    "np.random.standard_normal-scalar": (lambda x: x * np.random.standard_normal(),
                                         "NumPy's global"),
    "np.random.choice": (lambda x: x * np.random.choice([1.0, 2.0]), "NumPy's global"),
    "np.random.permutation": (lambda x: x[np.random.permutation(3)], "NumPy's global"),
    "global-generator": (lambda x: x + RNG.normal(size=3), "the global `RNG`"),
    "global-randomstate": (lambda x: x + RS.normal(size=3), "the global `RS`"),
    "random.random": (lambda x: x * random.random(), "Python's global random state"),
    "random.gauss": (lambda x: x * random.gauss(0.0, 1.0), "Python's global random state"),
    "closure": (_closure(), "the variable `g` closed over"),
    "default-argument": (lambda x, r=MOD.rng: x + r.normal(size=3), "a default argument"),
    "helper-function": (lambda x: x + _helper_noise(3), "the global `RNG` of _helper_noise"),
    "bound-method": (_Model().loss, "an attribute of _Model"),
    "partial": (functools.partial(lambda x, r: x + r.normal(size=3),
                                  r=np.random.default_rng(5)), "an argument of a partial"),
    "module-attribute": (lambda x: x + MOD.rng.normal(size=3), "module noise_module"),
    "unseeded-inside": (lambda x: x + np.random.default_rng().normal(size=3),
                        "without a seed"),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_random_draw_while_tracing_raises(name):
    fn, where = DRAWS[name]
    with pytest.raises(vg.RandomStateError, match=where) as info:
        vg.jit(fn)(X)
    msg = str(info.value)
    assert "test_randomness.py" in msg, msg  # the user's line
    assert "pass it as an argument" in msg
    with pytest.raises(vg.RandomStateError):  # nothing was cached
        vg.grad(lambda x: vnp.sum(fn(x)))(X)


def test_random_draw_error_names_the_line_inside_a_helper():
    with pytest.raises(vg.RandomStateError) as info:
        vg.jit(DRAWS["helper-function"][0])(X)
    src = info.value.src
    assert src.func == "_helper_noise"
    with open(__file__) as f:
        assert "HELPER LINE" in f.read().splitlines()[src.line - 1]


def test_random_draw_from_a_static_argument_raises():
    with pytest.raises(vg.RandomStateError, match="a static argument"):
        vg.jit(lambda x, r: x + r.normal(size=3))(X, np.random.default_rng(2))


def test_fixed_seed_generator_inside_is_exact_numpy_semantics():
    """Created inside with a fixed seed, NumPy gives the same sample on every call too."""
    def f(x):
        rng = np.random.default_rng(0)
        return x + rng.normal(size=3)
    np.testing.assert_array_equal(vg.jit(f)(X), f(X))
    np.testing.assert_array_equal(vg.jit(f)(X), f(X))
    np.testing.assert_array_equal(vg.grad(lambda x: vnp.sum(f(x) ** 2))(X), 2 * f(X))


def test_noise_passed_as_an_argument_is_fresh_every_call():
    f = vg.jit(lambda x, noise: x + noise)
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    np.testing.assert_array_equal(f(X, a), X + a)
    np.testing.assert_array_equal(f(X, b), X + b)


def test_no_random_call_leaves_every_state_untouched():
    before = (np.random.get_state()[1].copy(), random.getstate(), RNG.bit_generator.state)
    vg.grad(lambda x: vnp.sum(x * x))(X)
    after = (np.random.get_state()[1], random.getstate(), RNG.bit_generator.state)
    np.testing.assert_array_equal(before[0], after[0])
    assert before[1:] == after[1:]


def test_fingerprints_see_every_draw():
    from vecgrad.randomness import fingerprint
    rs = np.random.RandomState(7)
    for draw in [lambda: rs.standard_normal(), lambda: rs.standard_normal(),  # (gauss cache)
                 lambda: rs.rand()]:
        before = fingerprint(rs)
        draw()
        assert fingerprint(rs) != before
    r = random.Random(3)
    for draw in [r.random, lambda: r.gauss(0, 1), lambda: r.gauss(0, 1)]:
        before = fingerprint(r)
        draw()
        assert fingerprint(r) != before
    for bg in [np.random.PCG64(1), np.random.MT19937(1), np.random.Philox(1),
               np.random.SFC64(1)]:
        g = np.random.Generator(bg)
        before = fingerprint(g)
        g.random()
        assert fingerprint(g) != before
