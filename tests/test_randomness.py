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


def _seeded_reseeded_from_os(x):
    rs = np.random.RandomState(0)
    rs.seed()  # seeded again, from the OS
    return x + rs.randn(3)


SEEDED_INSIDE = {  # deterministic in NumPy too: allowed, and compiled in exactly
    "RandomState(0)": lambda x: x + np.random.RandomState(0).randn(3),
    "RandomState(seed list)": lambda x: x + np.random.RandomState([1, 2, 3]).randn(3),
    "RandomState(np.uint32)": lambda x: x * np.random.RandomState(np.uint32(7)).rand(),
    "RandomState(MT19937(0))": lambda x: x + np.random.RandomState(np.random.MT19937(0)).rand(3),
    "RandomState(0).seed(1)": lambda x: x + _reseeded(np.random.RandomState(0), 1).randn(3),
    "default_rng(0)": lambda x: x + np.random.default_rng(0).normal(size=3),
    "Generator(PCG64(3))": lambda x: x + np.random.Generator(np.random.PCG64(3)).random(3),
    "random.Random(0)": lambda x: x * random.Random(0).random(),
    "random.Random('seed')": lambda x: x * random.Random("seed").gauss(0.0, 1.0),
}
UNSEEDED_INSIDE = {  # fresh OS entropy on every call in NumPy and Python: an error
    "RandomState()": lambda x: x + np.random.RandomState().randn(3),
    "RandomState(None)": lambda x: x + np.random.RandomState(None).randn(3),
    "RandomState(0).seed()": _seeded_reseeded_from_os,
    "default_rng()": lambda x: x + np.random.default_rng().normal(size=3),
    "Generator(PCG64())": lambda x: x + np.random.Generator(np.random.PCG64()).random(3),
    "SeedSequence()": lambda x: x + np.random.SeedSequence().generate_state(3),
    "random.Random()": lambda x: x * random.Random().random(),
    "random.Random(0).seed()": lambda x: x * _reseeded(random.Random(0), None).random(),
    "random.SystemRandom()": lambda x: x * random.SystemRandom().random(),
}


def _reseeded(r, seed):
    r.seed(seed)
    return r


@pytest.mark.parametrize("name", list(SEEDED_INSIDE))
def test_seeded_generator_created_inside_is_allowed(name):
    fn = SEEDED_INSIDE[name]
    for _ in range(2):  # the same sample on every call, as NumPy gives
        np.testing.assert_array_equal(vg.jit(fn)(X), fn(X))
    vg.check_grads(lambda x: vnp.sum(fn(x) ** 2), (X,))


@pytest.mark.parametrize("name", list(UNSEEDED_INSIDE))
def test_unseeded_generator_created_inside_raises(name):
    with pytest.raises(vg.RandomStateError, match="without a seed") as info:
        vg.jit(UNSEEDED_INSIDE[name])(X)
    assert "test_randomness.py" in str(info.value)


def test_cholesky_reparameterization_trick_with_a_seeded_randomstate():
    """autograd's test_linalg.py::test_cholesky_reparameterization_trick: the noise comes from
    RandomState(0) made inside the function."""
    def fun(a):
        rng = np.random.RandomState(0)
        z = np.dot(np.linalg.cholesky(a), rng.randn(a.shape[0]))
        return np.linalg.norm(z)
    r = np.random.default_rng(3)
    m = r.standard_normal((4, 4))
    a = m @ m.T + 4 * np.eye(4)
    assert vg.jit(fun)(a) == pytest.approx(fun(a))
    vg.check_grads(lambda a: fun((a + a.T) / 2), (a,))


def test_generators_made_outside_a_trace_are_untouched():
    ss = np.random.RandomState()._bit_generator._seed_seq
    assert type(ss.entropy) is int
    assert isinstance(random.Random().random(), float)
    g = np.random.default_rng()
    assert type(g.bit_generator.seed_seq.entropy) is int
