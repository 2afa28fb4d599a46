"""Call signatures: Python numbers traced as weakly typed values (static only when the trace
needs their value), and big static data recognized without re-hashing it (never stale)."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import api

R = np.random.default_rng(0)
X = R.standard_normal(6)
X32 = X.astype(np.float32)


def counting(fn):
    calls = []

    def f(*a, **k):
        calls.append(1)
        return fn(*a, **k)
    f.calls = calls
    return f


# --------------------------------------------------------------- Python-number arguments

def test_a_new_float_value_does_not_compile_again():
    f = counting(lambda x, lr, i: vnp.sum(x * x) * lr + i)
    g = vg.grad(f)
    for k in range(5):
        np.testing.assert_allclose(g(X, 0.1 * k, k), 2 * X * 0.1 * k, rtol=1e-12)
        np.testing.assert_allclose(vg.jit(f)(X, 0.1 * k, k), np.sum(X * X) * 0.1 * k + k)
    assert len(f.calls) == 2  # one trace for grad, one for jit


def test_python_numbers_are_weakly_typed_as_in_numpy():
    cases = [
        (lambda x, s: x * s, 0.5),
        (lambda x, s: x + s, 3),
        (lambda x, s: x * (s * 2.0) - s, 0.25),  # Python arithmetic stays weak
        (lambda x, s: x / (-s), 1.5),
        (lambda x, s: x * np.sqrt(s), 2.0),  # a NumPy function of it is float64
        (lambda x, s: vnp.where(x > 0, s, x), 1.0),
    ]
    for fn, s in cases:
        want = fn(X32, s)
        got = vg.jit(fn)(X32, s)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    buf_fn = lambda x, s: vnp.zeros(3, np.float32) + s
    assert vg.jit(buf_fn)(X32, 2.5).dtype == np.float32


def test_an_argument_used_concretely_becomes_static_for_that_function():
    def f(x, n, lr):
        total = 0.0
        for k in range(n):  # needs n's value
            total = total + vnp.sum(x[k] * x) * lr
        return total
    f = counting(f)
    g = vg.grad(f)
    for n in (2, 3, 2, 3):
        for lr in (0.1, 0.2):
            want = sum(X[k] + (k == np.arange(6)) * X.sum() for k in range(n)) * lr
            np.testing.assert_allclose(g(X, n, lr), want, rtol=1e-12)
    # first call: traced with n dynamic (failed), then static; then one trace per new n.
    # lr stayed dynamic: no trace for a new lr.
    assert len(f.calls) == 3
    assert api._CACHE[f].static == frozenset({1})


@pytest.mark.parametrize("use", [
    lambda x, i: x[i],  # an index
    lambda x, i: x[:i] * 2.0,  # a slice bound
    lambda x, i: x * 2.0 if i > 1 else x,  # an if
    lambda x, i: x.reshape(i, -1),  # a shape
    lambda x, i: x[int(i * 2) - 1],  # derived through Python arithmetic
    lambda x, i: x[int(np.sqrt(i * 1.0))],  # derived through a NumPy function
    lambda x, i: {1: x, 2: x * 2.0, 3: x * 3.0}[i],  # a dict key
])
def test_concrete_uses_of_an_int_argument(use):
    f = counting(use)
    for i in (1, 2, 3):
        np.testing.assert_allclose(vg.jit(f)(X, i), use(X, i))


def test_only_the_scalar_that_was_needed_is_made_static():
    f = counting(lambda x, a, b: x[:a] * b)
    for a, b in [(2, 0.5), (2, 0.7), (3, 0.7), (3, 0.9)]:
        np.testing.assert_allclose(vg.jit(f)(X, a, b), X[:a] * b)
    assert api._CACHE[f].static == frozenset({1})
    assert len(f.calls) == 3  # a=2 dynamic (fails), a=2 static, a=3 static


def test_keyword_scalars_too():
    f = counting(lambda x, *, n, s: x[:n] * s)
    for n, s in [(2, 0.5), (2, 0.25), (4, 0.25)]:
        np.testing.assert_allclose(vg.jit(f)(X, n=n, s=s), X[:n] * s)
    assert api._CACHE[f].static == frozenset({"n"})


def test_errors_unrelated_to_scalars_are_raised_unchanged():
    def f(x, s):
        return x * s + vnp.ones(4)  # <- a shape error, whatever s is
    with pytest.raises(vg.ShapeError):
        vg.jit(f)(X, 0.5)
    assert api._CACHE[f].static == frozenset()


def test_grad_with_respect_to_a_python_float():
    g = vg.grad(lambda x, s: vnp.sum(vnp.sin(x * s)), argnums=1)(X, 0.3)
    np.testing.assert_allclose(g, np.sum(np.cos(X * 0.3) * X), rtol=1e-12)
    assert np.ndim(g) == 0


def test_trace_scalars_off_makes_every_number_static():
    f = counting(lambda x, s: x * s)
    with vg.config(trace_scalars=False):
        for s in (0.1, 0.2):
            vg.jit(f)(X, s)
    assert len(f.calls) == 2


def test_scalars_through_nested_transformations():
    inner = lambda x, n: vnp.sum(x[:n] ** 2)

    def outer(x, n, s):
        return vg.grad(inner)(x, n) * s
    for n in (2, 3):
        want = np.where(np.arange(6) < n, 2 * X, 0) * 0.5
        np.testing.assert_allclose(vg.jit(outer)(X, n, 0.5), want)
        np.testing.assert_allclose(vg.grad(lambda x, n, s: vnp.sum(outer(x, n, s)))(X, n, 0.5),
                                   np.where(np.arange(6) < n, 2 * 0.5, 0.0))
    assert 1 in api._CACHE[outer].static
    w = vg.jit(lambda x, s: vg.jit(lambda y, t: y * t)(x, s))(X32, 0.5)
    assert w.dtype == np.float32  # weak through the nested call


def test_lstm_style_training_loop_compiles_once():
    """autograd's examples call grad(objective)(params, iteration) every step."""
    def objective(params, it):
        h = vnp.zeros(3)
        for t in range(4):
            h = vnp.tanh(params["W"] @ h + params["U"] * X[t])
        return vnp.sum(h ** 2) * (1.0 + 0.0 * it)
    objective = counting(objective)
    params = {"W": R.standard_normal((3, 3)) * 0.3, "U": R.standard_normal(3)}
    g = vg.grad(objective)
    for it in range(6):
        grads = g(params, it)
        params = {k: params[k] - 0.1 * grads[k] for k in params}
    assert len(objective.calls) == 1


# ------------------------------------------------------------------------- static data

def edge_loss(x, edges):
    total = 0.0
    for i, j in edges:
        total = total + (x[i] - x[j]) ** 2
    return total


def np_edge_loss_grad(x, edges):
    g = np.zeros_like(x)
    for i, j in edges:
        g[i] += 2 * (x[i] - x[j])
        g[j] -= 2 * (x[i] - x[j])
    return g


def test_a_mutated_static_list_is_never_stale():
    edges = [(k % 6, (k * 5 + 1) % 6) for k in range(40)]
    g = vg.grad(edge_loss)
    np.testing.assert_allclose(g(X, edges), np_edge_loss_grad(X, edges), rtol=1e-12)
    edges[3] = (0, 5)  # replaced in place
    np.testing.assert_allclose(g(X, edges), np_edge_loss_grad(X, edges), rtol=1e-12)
    edges.append((2, 4))
    np.testing.assert_allclose(g(X, edges), np_edge_loss_grad(X, edges), rtol=1e-12)
    del edges[:5]
    np.testing.assert_allclose(g(X, edges), np_edge_loss_grad(X, edges), rtol=1e-12)


def test_a_list_of_lists_mutated_inside_is_never_stale():
    edges = [[k % 6, (k * 5 + 1) % 6] for k in range(40)]
    g = vg.grad(edge_loss)
    np.testing.assert_allclose(g(X, edges), np_edge_loss_grad(X, edges), rtol=1e-12)
    edges[7][1] = 0  # an inner list changed: no snapshot could see that cheaply
    np.testing.assert_allclose(g(X, edges), np_edge_loss_grad(X, edges), rtol=1e-12)


def test_static_tuples_and_equal_copies_share_an_entry():
    edges = tuple((k % 6, (k * 5 + 1) % 6) for k in range(40))
    f = counting(edge_loss)
    g = vg.grad(f)
    g(X, edges)
    g(X, edges)
    g(X, tuple(edges))  # an equal tuple, another object
    g(X, list(edges))  # a list is another type: another key
    assert len(f.calls) == 2
    d = {f"e{k}": e for k, e in enumerate(edges)}
    dict_loss = counting(lambda x, d: edge_loss(x, d.values()))
    np.testing.assert_allclose(vg.grad(dict_loss)(X, d), np_edge_loss_grad(X, edges))
    d["e0"] = (1, 2)
    np.testing.assert_allclose(vg.grad(dict_loss)(X, d),
                               np_edge_loss_grad(X, list(d.values())), rtol=1e-12)
    assert len(dict_loss.calls) == 2


def test_one_flattener_serves_arguments_and_results():
    """pytree.flat is the flattener of call signatures and of results (and unflatten the
    inverse of both): the same treedef for the same tree, big static containers included."""
    from vecgrad.pytree import flatten, unflatten
    from vecgrad.signature import flatten_call, unflatten_call
    edges = tuple((i, i + 1) for i in range(40))
    tree = ({"w": np.ones(2), "b": [np.zeros(1), None]}, edges, "static", 3)
    leaves, td = flatten(tree)
    leaves2, td2, _ = flatten_call(tree, {}, trace_scalars=False)
    assert td2 == (td[1], None) and all(a is b for a, b in zip(leaves, leaves2))
    for back in (unflatten(td, leaves), unflatten_call(td2, leaves2)[0]):
        assert back[0]["w"] is tree[0]["w"] and back[0]["b"][0] is tree[0]["b"][0]
        assert back[0]["b"][1] is None and back[1] is edges and back[2:] == ("static", 3)


def _nbr_loss(x, nb):
    total = 0.0
    for v, us in nb.items():
        total += vnp.sum((x[v] - sum(x[u] for u in us) / len(us)) ** 2)
    return total


def _np_nbr_grad(x, nb):
    g = np.zeros_like(x)
    for v, us in nb.items():
        r = 2 * (x[v] - sum(x[u] for u in us) / len(us))
        g[v] += r
        for u in us:
            g[u] -= r / len(us)
    return g


@pytest.mark.parametrize("box", [dict, "tuple_of_lists", "list_of_dicts"])
def test_containers_of_lists_are_remembered_and_never_stale(box):
    n = 40 if box is dict else 6
    nb = {v: [(v + 1) % n, (v * 5 + 2) % n] for v in range(n)}
    if box == "tuple_of_lists":
        nb = {v: us for v, us in nb.items()}
        wrap, unwrap = (lambda d: tuple(list(us) for us in d.values())), \
            (lambda t: dict(enumerate(t)))
    elif box == "list_of_dicts":
        wrap, unwrap = (lambda d: [{"v": v, "us": us} for v, us in d.items()] * 7), \
            (lambda t: {e["v"]: e["us"] for e in t})
    else:
        wrap = unwrap = (lambda d: d)
    f = counting(lambda x, s: _nbr_loss(x, unwrap(s)))
    g = vg.grad(f)
    s = wrap(nb)
    x = R.standard_normal((n, 2))
    np.testing.assert_allclose(g(x, s), _np_nbr_grad(x, unwrap(s)), rtol=1e-12)
    g(x, s)
    assert len(f.calls) == 1  # the same object, unchanged: no new trace
    inner = next(iter(unwrap(s).values()))
    inner[0] = 3  # changed inside, in place
    np.testing.assert_allclose(g(x, s), _np_nbr_grad(x, unwrap(s)), rtol=1e-12)
    inner.append(4)
    np.testing.assert_allclose(g(x, s), _np_nbr_grad(x, unwrap(s)), rtol=1e-12)
    assert len(f.calls) == 3


def test_a_big_dict_of_lists_is_flattened_once():
    from vecgrad import pytree, signature
    nb = {v: [(v * 7 + k) % 6 for k in range(10)] for v in range(300)}
    x = R.standard_normal((300, 2))
    g = vg.grad(_nbr_loss)
    g(x, nb)
    assert pytree._MEMO[id(nb)][0] is nb  # recognized by identity and a deep snapshot
    _, td, _ = signature.flatten_call((x, nb), {})
    assert td[0][1][0] == "static"  # one static value, not 3,300 flattened items


def test_snapshots_share_immutable_items():
    # a list of index tuples is compared with its snapshot item by item: identical tuples
    # stop the comparison at once (a copied tuple would be compared element by element)
    from vecgrad import pytree
    edges = [(k % 6, (k * 5 + 1) % 6) for k in range(40)]
    vg.grad(edge_loss)(X, edges)
    snap = pytree._MEMO[id(edges)][1]
    assert snap == edges and all(a is b for a, b in zip(snap, edges))


# -------------------------------------------- Python floats inside differentiated pytrees

def _central(f, p, key, eps=1e-6):
    hi, lo = dict(p), dict(p)
    hi[key], lo[key] = p[key] + eps, p[key] - eps
    return (f(hi) - f(lo)) / (2 * eps)


@pytest.mark.parametrize("scale", [2.0, -0.5, 1e-3])
def test_grad_of_a_python_float_in_a_dict_is_its_derivative(scale):
    """As JAX's grad: a Python float inside a differentiated container is a leaf with a
    gradient (vecgrad kept it static and returned None: a silently missing gradient)."""
    x = np.random.default_rng(0).normal(size=5)

    def f(p):
        return vnp.sum(vnp.tanh(p["w"] * x) * p["scale"]) + p["scale"] ** 2

    p = {"w": np.linspace(0.1, 0.9, 5), "scale": scale}
    g = vg.grad(f)(p)
    assert isinstance(g["scale"], np.ndarray) and g["scale"].shape == ()
    assert g["scale"].dtype == np.float64
    np.testing.assert_allclose(g["scale"], _central(f, p, "scale"), rtol=1e-6)
    np.testing.assert_allclose(f(p), vg.jit(f)(p))


def test_python_floats_in_lists_tuples_and_namedtuples_are_leaves():
    from typing import NamedTuple

    class P(NamedTuple):
        a: float
        b: np.ndarray

    x = np.arange(3.0)
    val, g = vg.value_and_grad(lambda p, x: p[0][1] * vnp.sum(x) + p[1].a * p[1].b[0])(
        ([1.0, 3.0], P(2.0, np.ones(2))), x)
    assert val == 11.0
    np.testing.assert_allclose(g[0][0], 0.0)
    np.testing.assert_allclose(g[0][1], 3.0)
    np.testing.assert_allclose(g[1].a, 1.0)
    np.testing.assert_allclose(g[1].b, [2.0, 0.0])
    # a new value of the float does not compile again (it is traced, not a static key)
    f = vg.grad(lambda p: p["a"] * p["w"].sum())
    f({"a": 1.0, "w": np.ones(2)})
    n = len(vg.api.fun_cache(f._base))
    np.testing.assert_allclose(f({"a": 5.0, "w": np.ones(2)})["w"], 5.0)
    assert len(vg.api.fun_cache(f._base)) == n


def test_floats_of_arguments_not_differentiated_stay_static():
    """Only the differentiated arguments' floats are traced (jit and argnums leave the rest
    static, as before: a float there may be a hyperparameter used as a Python number)."""
    def f(w, cfg):
        return vnp.sum(w) * cfg["lr"] * len(range(int(cfg["steps"])))

    g = vg.grad(f)(np.ones(2), {"lr": 0.5, "steps": 3.0})
    np.testing.assert_allclose(g, 1.5)
    assert vg.jit(f)(np.ones(2), {"lr": 0.5, "steps": 3.0}) == 3.0


@pytest.mark.parametrize("where", ["top", "dict"])
def test_a_differentiated_float_used_as_a_python_number_is_a_typed_error(where):
    """JAX raises a concretization error here; vecgrad names the argument and the way out
    (the value is needed by an `if`, so it cannot carry a gradient)."""
    def f(p, x):
        a = p["a"] if where == "dict" else p
        if a > 0:
            return a * vnp.sum(x)
        return vnp.sum(x)

    arg = {"a": 2.0} if where == "dict" else 2.0
    with pytest.raises(vg.ArgumentError, match=r"argument 0(\['a'\])?, the Python float 2.0.*"
                       r"uses its value as a Python number") as e:
        vg.grad(f)(arg, np.ones(2))
    assert "test_signature.py" in str(e.value)
    np.testing.assert_allclose(vg.grad(f, argnums=1)(arg, np.ones(2)), 2.0)


def test_vjp_jvp_and_linearize_treat_python_floats_as_leaves():
    """As JAX's: a Python float primal (at the top or inside a container) has a cotangent and
    takes a tangent (vjp gave None, and jvp dropped the tangent of a float in a dict: a
    silently wrong directional derivative)."""
    x = np.arange(3.0)

    def f(p, x):
        return vnp.sin(p["a"] * x) * p["b"][0]

    p = {"a": 2.0, "b": [0.5]}
    _, back = vg.vjp(f, p, x)
    ct = np.array([1.0, -2.0, 0.5])
    gp, gx = back(ct)
    np.testing.assert_allclose(gx, ct * 2.0 * np.cos(2.0 * x) * 0.5)
    eps = 1e-6

    def fa(a):
        return np.sin(a * x) * 0.5

    np.testing.assert_allclose(gp["a"], ct @ ((fa(2.0 + eps) - fa(2.0 - eps)) / (2 * eps)),
                               rtol=1e-6)
    np.testing.assert_allclose(gp["b"][0], ct @ np.sin(2.0 * x))
    _, t = vg.jvp(f, (p, x), ({"a": 1.0, "b": [0.0]}, np.zeros(3)))
    np.testing.assert_allclose(t, (fa(2.0 + eps) - fa(2.0 - eps)) / (2 * eps), rtol=1e-6)
    _, lin = vg.linearize(f, p, x)
    np.testing.assert_allclose(lin({"a": 1.0, "b": [0.0]}, np.zeros(3)), t)
    _, back2 = vg.vjp(lambda a, x: a * x, 2.0, x)
    np.testing.assert_allclose(back2(ct)[0], ct @ x)


def test_jvp_tangent_of_a_static_float_is_an_error_not_dropped():
    def f(p, x):
        return p["a"] * x if p["a"] > 0 else x

    x = np.arange(3.0)
    _, t = vg.jvp(f, ({"a": 2.0}, x), ({"a": 0.0}, np.ones(3)))
    np.testing.assert_allclose(t, 2.0)
    with pytest.raises(vg.ArgumentError, match=r"argument 0\['a'\] is the Python float 2.0"):
        vg.jvp(f, ({"a": 2.0}, x), ({"a": 1.0}, np.ones(3)))
