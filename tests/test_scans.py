"""Recurrences: linear ones become scan primitives, nonlinear ones rolled loops (passes.scans).

Each program is checked three ways: against a plain NumPy loop (float64, rtol 1e-9), against
the unrolled trace compiled as written (values and gradients), and by central differences.
Structural checks say what each recurrence became, and that the graphs after rolling do not
grow with the trip count.
"""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.api import trace_graph
from vecgrad.autodiff import vjp_graph
from vecgrad.backends import compile_graph
from vecgrad.ir import Const, Graph, Params, pretty, typecheck
from vecgrad.notes import Recurrence, Unbatched, of
from vecgrad.pytree import flatten

RTOL = 1e-9


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def prims(g: Graph) -> list[str]:
    """Names of the primitives in g and in the bodies of its loops."""
    out = []
    for e in g.eqns:
        out.append(e.prim.name)
        if e.prim is P.loop:
            out += prims(e.params["body"])
    return out


def unrolled(f, args, argnums):
    """The value and gradient of f compiled from its trace as written (nothing batched or
    rolled): the reference the rolled program must equal."""
    g = trace_graph(f, args)
    leaves = flatten(args)[0]
    nums = (argnums,) if isinstance(argnums, int) else argnums
    starts = np.cumsum([0] + [len(flatten(a)[0]) for a in args])
    wrt = [i for a in nums for i in range(starts[a], starts[a + 1])]
    res = compile_graph(typecheck(vjp_graph(g, wrt))).fn(*leaves, np.ones(()))
    return res[0], res[1:]


def check(f, args, argnums=0, ref=None, fd=True):
    """Rolled == unrolled == reference (values), rolled gradient == unrolled gradient ==
    central differences. Returns the gradient's compile entry."""
    val0, grads0 = unrolled(f, args, argnums)
    e, _ = vg.grad(f, argnums=argnums).entry(*args)
    val, grads = vg.value_and_grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(val, val0, rtol=RTOL)
    if ref is not None:
        np.testing.assert_allclose(val, ref(*args), rtol=RTOL)
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    if fd:
        vg.check_grads(f, args, argnums=argnums, rtol=1e-6, atol=1e-8)
    return e


def recurrences(e) -> list[Recurrence]:
    return of(e.notes, Recurrence)


# ------------------------------------------------------------------ linear recurrences

def cumsum_buffer(x):
    c = vnp.zeros(x.shape)
    c[0] = x[0]
    for i in range(1, x.shape[0]):
        c[i] = c[i - 1] + x[i]
    return vnp.sum(c * vnp.cos(c))


def cumsum_accumulator(x):
    acc = 0.0
    total = 0.0
    for t in range(x.shape[0]):
        acc = acc + x[t]
        total = total + acc * acc
    return total


def cumsum_iadd(x):
    acc = vnp.zeros(x.shape[1])
    out = []
    for t in range(x.shape[0]):
        acc += x[t]
        out.append(acc * 1.0)
    return vnp.sum(vnp.stack(out) ** 2)


def cumsum_list(x):
    cs = [x[0]]
    for t in range(1, x.shape[0]):
        cs.append(cs[-1] + x[t])
    return vnp.sum(vnp.sin(vnp.stack(cs)))


def affine_scalar(x):
    h = 0.0
    hs = []
    for t in range(x.shape[0]):
        h = 0.9 * h + x[t]
        hs.append(h)
    return vnp.sum(vnp.stack(hs) ** 2)


def affine_varying(a, x):
    c = vnp.zeros(x.shape[1])
    total = 0.0
    for t in range(x.shape[0]):
        c = a[t] * c + x[t]
        total = total + vnp.sum(vnp.tanh(c))
    return total


def affine_vector_state(A, x):
    h = vnp.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = A * h + x[t]
    return vnp.sum(h ** 2)


def cumprod_loop(x):
    c = vnp.ones(x.shape[1])
    rows = []
    for t in range(x.shape[0]):
        c = c * x[t]
        rows.append(c)
    return vnp.sum(vnp.stack(rows))


def running_max(x):
    m = x[0]
    out = [m]
    for t in range(1, x.shape[0]):
        m = vnp.maximum(m, x[t])
        out.append(m)
    return vnp.sum(vnp.stack(out) * vnp.arange(1.0, x.shape[0] + 1)[:, None])


def running_min(x):
    m = vnp.full(x.shape[1], np.inf)
    total = 0.0
    for t in range(x.shape[0]):
        m = vnp.minimum(m, x[t])
        total = total + vnp.sum(m * m)
    return total


def reversed_buffer(x):
    n = x.shape[0]
    c = vnp.zeros(x.shape)
    c[n - 1] = x[n - 1]
    for i in range(n - 2, -1, -1):
        c[i] = c[i + 1] * 0.5 + x[i]
    return vnp.sum(c ** 3)


def np_cumsum_cos(x):
    c = np.cumsum(x, 0)
    return np.sum(c * np.cos(c))


LINEAR = [
    (cumsum_buffer, lambda: (rng().standard_normal((12, 3)),), "cumsum", np_cumsum_cos),
    (cumsum_accumulator, lambda: (rng(1).standard_normal(11),), "cumsum",
     lambda x: np.sum(np.cumsum(x) ** 2)),
    (cumsum_iadd, lambda: (rng(2).standard_normal((9, 4)),), "cumsum",
     lambda x: np.sum(np.cumsum(x, 0) ** 2)),
    (cumsum_list, lambda: (rng(3).standard_normal((10, 2)),), "cumsum",
     lambda x: np.sum(np.sin(np.cumsum(x, 0)))),
    (affine_scalar, lambda: (rng(4).standard_normal(13),), "affine_scan", None),
    (affine_varying, lambda: (rng(5).uniform(-1.2, 1.2, (10, 3)), rng(6).standard_normal((10, 3))),
     "affine_scan", None),
    (affine_vector_state, lambda: (rng(7).uniform(-1, 1, 4), rng(8).standard_normal((9, 4))),
     "affine_scan", None),
    (cumprod_loop, lambda: (rng(9).uniform(0.5, 1.5, (8, 3)),), "cumprod",
     lambda x: np.sum(np.cumprod(x, 0))),
    (running_max, lambda: (rng(10).standard_normal((11, 2)),), "cummax", None),
    (running_min, lambda: (rng(11).standard_normal((9, 3)),), "cummin",
     lambda x: np.sum(np.minimum.accumulate(x, 0) ** 2)),
    (reversed_buffer, lambda: (rng(12).standard_normal((10, 2)),), "affine_scan", None),
]


@pytest.mark.parametrize("f,make,scan,ref", LINEAR, ids=[c[0].__name__ for c in LINEAR])
def test_linear_recurrence_becomes_a_scan(f, make, scan, ref):
    args = make()
    e = check(f, args, argnums=tuple(range(len(args))), ref=ref)
    fwd = prims(e.stages["simplify"])
    # (constant coefficients: simplify writes the affine scan in closed form, a cumsum)
    closed = scan == "affine_scan" and "affine_scan" in prims(e.stages["scans"]) and \
        "cumsum" in fwd
    assert (scan in fwd or closed) and "loop" not in fwd, fwd
    notes = recurrences(e)
    assert notes and any(scan in n.became for n in notes), notes


# ------------------------------------------------------------------ nonlinear recurrences

def tanh_rnn(W, U, b, xs):
    h = vnp.zeros(W.shape[0])
    total = 0.0
    for t in range(xs.shape[0]):
        h = vnp.tanh(W @ h + U @ xs[t] + b)
        total = total + vnp.sum(h ** 2)
    return total


def lstm_cell(W, U, b, h, c, x):
    gates = W @ h + U @ x + b
    n = h.shape[0]
    i, f = vg.nn.sigmoid(gates[:n]), vg.nn.sigmoid(gates[n:2 * n])
    o, g = vg.nn.sigmoid(gates[2 * n:3 * n]), vnp.tanh(gates[3 * n:])
    c = f * c + i * g
    return o * vnp.tanh(c), c


def lstm(W, U, b, xs):
    n = W.shape[1]
    h, c = vnp.zeros(n), vnp.zeros(n)
    loss = 0.0
    for t in range(xs.shape[0]):
        h, c = lstm_cell(W, U, b, h, c, xs[t])
        loss = loss + vnp.sum(vg.nn.log_softmax(h))
    return loss


def rk4(theta, y0):
    def f(y):
        return vnp.sin(theta * y) - 0.1 * y ** 3
    y, dt = y0, 0.1
    for _ in range(12):
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return vnp.sum(y ** 2)


def two_layer(W1, W2, xs):
    h1 = vnp.zeros(W1.shape[0])
    h2 = vnp.zeros(W2.shape[0])
    for t in range(xs.shape[0]):
        h1 = vnp.tanh(W1 @ h1 + xs[t])
        h2 = vnp.sin(W2 @ h2 + h1)
    return vnp.sum(h2)


def independent_rnns(W, xs):
    total = 0.0
    for r in range(xs.shape[0]):  # 5 independent recurrences of the same shape
        h = vnp.zeros(W.shape[0])
        for t in range(xs.shape[1]):
            h = vnp.tanh(W @ h + xs[r, t])
        total = total + vnp.sum(h * (r + 1.0))
    return total


def shift_field_rk(x, y0):
    """RK steps of y' = f(y) where f fills a fresh buffer per call (GradBench's ode):
    z[0] = x[0], z[1:] = x[1:] * g(y[:-1])."""
    def f(y):
        z = vnp.empty_like(x)
        z[0] = x[0]
        z[1:] = x[1:] * vnp.sin(y[:-1])
        return z
    y, h = y0, 0.1
    for _ in range(9):
        k1 = f(y)
        k2 = f(y + h * k1 / 2)
        y = y + h * (k1 + 2 * k2) / 3
    return vnp.sum(y ** 2)


def fresh_buffers_per_step(w, xs):
    """A step that builds its state from new zeros/ones/full buffers each iteration."""
    h = vnp.zeros(w.shape)
    for t in range(xs.shape[0]):
        a = vnp.zeros_like(h)
        a[1:] = vnp.tanh(w[1:] * h[:-1] + xs[t, 1:])
        b = vnp.ones(h.shape)
        b[0] = vnp.cos(h[0]) + xs[t, 0]
        c = vnp.full(h.shape, 0.5)
        c[-1] = h[-1] * w[0]
        h = a * b + c
    return vnp.sum(h * h)


def tanh_rnn_ref(W, U, b, xs):
    h, total = np.zeros(W.shape[0]), 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        total += np.sum(h ** 2)
    return total


NONLINEAR = [
    (tanh_rnn, lambda: (0.5 * rng().standard_normal((4, 4)), rng(1).standard_normal((4, 3)),
                        rng(2).standard_normal(4), rng(3).standard_normal((10, 3))), tanh_rnn_ref),
    (lstm, lambda: (0.3 * rng().standard_normal((12, 3)), 0.3 * rng(1).standard_normal((12, 2)),
                    rng(2).standard_normal(12), rng(3).standard_normal((9, 2))), None),
    (rk4, lambda: (rng(4).uniform(0.5, 1.5, 3), rng(5).standard_normal(3)), None),
    (two_layer, lambda: (0.4 * rng(6).standard_normal((3, 3)), 0.4 * rng(7).standard_normal((3, 3)),
                         rng(8).standard_normal((8, 3))), None),
    (independent_rnns, lambda: (0.5 * rng(9).standard_normal((3, 3)),
                                rng(10).standard_normal((5, 7, 3))), None),
    (shift_field_rk, lambda: (rng(11).uniform(0.5, 1.5, 80), rng(12).standard_normal(80)), None),
    (fresh_buffers_per_step, lambda: (rng(14).uniform(0.5, 1.5, 70),
                                      rng(15).standard_normal((8, 70))), None),
]


@pytest.mark.parametrize("f,make,ref", NONLINEAR, ids=[c[0].__name__ for c in NONLINEAR])
def test_nonlinear_recurrence_becomes_a_rolled_loop(f, make, ref):
    args = make()
    e = check(f, args, argnums=tuple(range(len(args))), ref=ref)
    loops = [x for x in e.stages["simplify"].eqns if x.prim is P.loop]
    assert loops and recurrences(e)
    # the gradient runs one reverse loop over the step's VJP per forward loop (or a scan, when
    # the backward step is linear in the cotangent: rk4 of an elementwise field)
    n_loops = sum(x.prim is P.loop for x in e.stages["final"].eqns)
    assert len(loops) <= n_loops <= 2 * len(loops)


@pytest.mark.parametrize("f,make,ref", NONLINEAR, ids=[c[0].__name__ for c in NONLINEAR])
def test_gradient_loops_stack_only_what_is_read(f, make, ref):
    """Every stacked output of a loop in the compiled gradient is read (the residuals the
    optimized backward step no longer needs are not written per step)."""
    args = make()
    e, _ = vg.grad(f, argnums=tuple(range(len(args)))).entry(*args)
    g = e.stages["final"]
    for lp in (x for x in g.eqns if x.prim is P.loop):
        p = lp.params
        lay = P.layout(p["body"], p["length"], p["n_carry"])
        starts = set()
        for r in g.eqns:
            if lp.out in r.inputs:
                assert r.prim is P.getitem and len(r.params["idx"]) == 1
                k = r.params["idx"][0]
                starts.add(k if isinstance(k, int) else k.start)
        ends = [o + int(np.prod(sh)) for o, sh in lay]
        for k, (o, _) in enumerate(lay[p["n_carry"]:], p["n_carry"]):
            assert any(o <= s < ends[k] for s in starts), (f.__name__, k)


@pytest.mark.parametrize("f,make,ref", NONLINEAR, ids=[c[0].__name__ for c in NONLINEAR])
def test_gradient_loops_stack_no_slice_of_another_stack(f, make, ref):
    """A stacked y that is a slice of another stacked y of the same step (a cotangent and
    its [1:]) is not stacked again: its readers slice the other's stack."""
    args = make()
    e, _ = vg.grad(f, argnums=tuple(range(len(args)))).entry(*args)
    for lp in (x for x in e.stages["final"].eqns if x.prim is P.loop):
        body, nc = lp.params["body"], lp.params["n_carry"]
        ys = set(body.outputs[nc:])
        defs = {x.out: x for x in body.eqns}
        for y in body.outputs[nc:]:
            d = defs.get(y)
            assert d is None or d.prim is not P.getitem or d.inputs[0] not in ys, \
                (f.__name__, pretty(body))


def euler_with_dt(theta, x0, target, dt):
    x, cost = x0, 0.0
    for _ in range(12):
        x = x + dt * (vnp.tanh(theta @ x) - 0.1 * x)
        cost = cost + dt * vnp.sum((x - target) ** 2)
    return cost


@pytest.mark.parametrize("argnums", [(0,), (0, 1, 2), (3,), (0, 3)])
def test_gradient_loops_carry_only_what_is_read(argnums):
    """The backward loop of an integrator differentiated with respect to some inputs only
    carries no accumulator of an input's cotangent that nobody reads (dt's, when dt is not
    differentiated), nor reads the stacked values only that accumulator needed."""
    args = (0.5 * rng(20).standard_normal((3, 3)), rng(21).standard_normal((3, 2)),
            rng(22).standard_normal((3, 2)), 0.05)
    e = check(euler_with_dt, args, argnums=argnums)
    (fwd, bwd) = [x for x in e.stages["final"].eqns if x.prim is P.loop]
    scalars = [v for v in bwd.params["body"].inputs[:bwd.params["n_carry"]] if not v.aval.shape]
    # (dt's cotangent, a small contraction per step, is summed after the loop: loops.KEEP_MACS)
    assert not scalars, pretty(bwd.params["body"])
    if 3 not in argnums:  # the forward stacks nothing only dt's accumulator read
        assert len(fwd.params["body"].outputs) - fwd.params["n_carry"] <= 3


def test_a_carry_stacked_as_it_enters_and_leaves_is_stored_once_per_step():
    """The gradient's forward loop of an RNN stacks h_t (its output) and h_{t-1} (for the
    weight gradient): the second is the first shifted by one, filled after the loop."""
    W, U, b, xs = NONLINEAR[0][1]()
    e = check(tanh_rnn, (W, U, b, xs), argnums=(0, 1, 2))
    sources = [v.source for v in e.compiled.fn.__globals__.values() if hasattr(v, "source")]
    fwd = [s for s in sources if "range(" in s and "-1, -1)" not in s]
    assert fwd and all(re.search(r"_y\d+\[1:\] = _y\d+\[:-1\]", s) for s in fwd), sources
    assert not any(re.search(r"_y\d+\[_t\] = x\d+$", s, re.MULTILINE) for s in fwd), sources


def test_fresh_buffers_are_one_constant_and_stay_independent():
    """zeros/ones/full of one shape and value are one constant in a trace (recorded once,
    so steps that make them look alike), yet each buffer is written on its own."""
    def f(x):
        a, b, c = vnp.zeros(3), vnp.zeros(3), vnp.zeros_like(x)
        a[0] = x[0]
        b[1] = 2 * x[1]
        o1, o2 = vnp.ones(3), vnp.full(3, 1.0)
        o1[2] = x[2]
        return a + b * 10 + c + o1 * o2 + vnp.full(3, [1.0, 2.0, 3.0])
    x = np.array([1.0, 2.0, 3.0])
    want = np.array([1.0, 40.0, 0.0]) + np.array([1.0, 1.0, 3.0]) + [1.0, 2.0, 3.0]
    np.testing.assert_allclose(vg.jit(f)(x), want)
    g = trace_graph(f, (x,))
    consts = {id(a) for e in g.eqns for a in e.inputs
              if isinstance(a, Const) and a.aval.shape == (3,)}
    assert len(consts) == 3  # zeros, ones (twice the same), the array fill
    vg.check_grads(lambda x: vnp.sum(f(x) ** 2), (x,))


def test_independent_recurrences_share_one_loop_over_a_batched_state():
    W, xs = 0.5 * rng(9).standard_normal((3, 3)), rng(10).standard_normal((5, 7, 3))
    e, _ = vg.grad(independent_rnns).entry(W, xs)
    (lp,) = [x for x in e.stages["simplify"].eqns if x.prim is P.loop]
    assert lp.params["body"].inputs[0].aval.shape == (5, 3)  # the 5 states, one carry


@pytest.mark.parametrize("f,make", [(tanh_rnn, NONLINEAR[0][1]), (lstm, NONLINEAR[1][1]),
                                    (affine_vector_state, LINEAR[6][1])])
def test_graphs_do_not_grow_with_the_trip_count(f, make):
    def sizes(T):
        args = list(make())
        args[-1] = np.resize(args[-1], (T,) + args[-1].shape[1:])
        e, _ = vg.grad(f, argnums=0).entry(*args)
        return e.counts["simplify"], e.counts["final"], e.compiled.source.count("\n")
    assert sizes(8) == sizes(40)


# ------------------------------------------------------------------ details

def test_step_reads_and_writes_of_a_buffer_through_views():
    def f(x):
        y = vnp.zeros(x.shape)
        y[0] = x[0]
        for t in range(1, x.shape[0]):
            y[t] = vnp.tanh(y[t - 1] * 1.5 + x[t])  # nonlinear, through the buffer
        return vnp.sum(y[::2] ** 2)
    e = check(f, (rng(13).standard_normal((9, 2)),))
    assert "loop" in prims(e.stages["simplify"])


def test_running_max_with_ties_is_the_running_max():
    # (where values tie, the gradient goes to the latest element attaining the maximum, as
    # cummax's VJP does: an unrolled maximum chain splits it in halves instead)
    x = np.array([[1.0, 2.0], [1.0, 0.0], [3.0, 2.0], [3.0, 2.0], [0.0, 5.0], [4.0, 5.0]])
    e, _ = vg.grad(running_max).entry(x)
    assert "cummax" in prims(e.stages["simplify"])
    np.testing.assert_allclose(vg.jit(running_max)(x), running_max(x), rtol=RTOL)
    g, g0 = vg.grad(running_max)(x), unrolled(running_max, (x,), 0)[1][0]
    np.testing.assert_allclose(g.sum(0), g0.sum(0), rtol=RTOL)  # same mass per column


def test_affine_scan_falls_back_to_the_sequential_order_on_overflow():
    T = 64
    a = np.where(np.arange(T)[:, None] % 2 == 0, 1e200, 1e-200) * np.ones((T, 2))
    got = P.affine_scan.impl(np.ones(2), a, np.zeros((T, 2)))
    c, want = np.ones(2), []
    for t in range(T):
        c = a[t] * c
        want.append(c)
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-12)


def test_explain_reports_each_recurrence():
    args = NONLINEAR[0][1]()
    r = vg.explain(tanh_rnn, *args, argnums=(0, 1), budget=0.02)
    (f,) = r.recurrences
    assert f.count == 10 and f.src.func == "tanh_rnn" and "loop over a step" in f.became[0]
    text = str(r)
    assert "Recurrences" in text and "h = vnp.tanh(W @ h + U @ xs[t] + b)" in text
    r2 = vg.explain(cumsum_accumulator, rng().standard_normal(20), budget=0.02)
    assert [f.count for f in r2.recurrences] == [20]
    assert "cumsum" in r2.recurrences[0].became[0]


def test_show_prints_loop_bodies_indented():
    text = vg.show(tanh_rnn, *NONLINEAR[0][1](), file=io.StringIO())
    i = text.index("loop[body={...}")
    assert "\n      body = { lambda" in text[i:]


def test_loop_typecheck_checks_the_step():
    W = rng().standard_normal((3, 3))
    e, _ = vg.grad(tanh_rnn).entry(W, rng(1).standard_normal((3, 2)), np.zeros(3),
                                   rng(2).standard_normal((6, 2)))
    g = e.stages["simplify"]
    lp = next(x for x in g.eqns if x.prim is P.loop)
    body = lp.params["body"]
    bad = Graph(body.inputs, body.eqns[:-1], body.outputs)  # an output left undefined
    g2 = g.replace(eqns=tuple(x._replace(params=Params({**x.params, "body": bad}))
                              if x is lp else x for x in g.eqns))
    with pytest.raises(Exception, match="body"):
        typecheck(g2)


def test_second_order_recurrences():
    def pair_state(a, x):  # (p, q) carried: first order in the pair, so it rolls
        p, q = x[0], x[1]
        out = [p, q]
        for t in range(2, x.shape[0]):
            p, q = q, a * q + 0.5 * p + x[t]
            out.append(q)
        return vnp.sum(vnp.stack(out) ** 2)

    def two_back(a, x):  # reads two steps back: the read moves into the previous step
        out = [x[0], x[1]]
        for t in range(2, x.shape[0]):
            out.append(vnp.tanh(a * out[-1] + 0.5 * out[-2] + x[t]))
        return vnp.sum(vnp.stack(out) ** 2)

    def three_apart(a, x):  # one operation reads steps t-1 and t-3: stays unrolled
        out = [x[0], x[1], x[2]]
        for t in range(3, x.shape[0]):
            out.append(vnp.tanh(a * out[-1] * out[-3] + x[t]))
        return vnp.sum(vnp.stack(out) ** 2)
    args = (np.array(0.7), rng(14).standard_normal(10))
    assert recurrences(check(pair_state, args, argnums=(0, 1)))
    assert recurrences(check(two_back, args, argnums=(0, 1)))
    e = check(three_apart, args, argnums=(0, 1))
    assert "loop" not in prims(e.stages["simplify"])


def test_a_path_out_of_the_recurrence_and_back_keeps_it_correct():
    def f(x):
        h = vnp.zeros(x.shape[1])
        hs = []
        for t in range(x.shape[0]):
            back = vnp.sum(hs[-2]) if len(hs) > 1 else 0.0  # outside work fed back in
            h = vnp.tanh(h * 0.9 + x[t] + back)
            hs.append(h)
        return vnp.sum(vnp.stack(hs))
    check(f, (rng(15).standard_normal((9, 2)),))


@pytest.mark.parametrize("f,make,ref", NONLINEAR, ids=[c[0].__name__ for c in NONLINEAR])
def test_no_unbatched_note_at_a_rolled_line(f, make, ref):
    """What the first batching left unmerged at a line the scans pass then rolled went into
    the loop: explain does not report it as unbatched (the second batching says what is)."""
    args = make()
    e, _ = vg.grad(f, argnums=0).entry(*args)
    lines = {s for n in recurrences(e) for s in n.lines}
    assert lines and not [n for n in of(e.notes, Unbatched) if n.src in lines]


# ------------------------------------------------------------------ rolled before batching
# (pipeline's `roll` stage: a recurrence through a nonlinear function of its carry, the only
# copy of its step, with a chain of at least scans.MIN_CHAIN nonlinear operations)

def _long(seed: int, T: int):
    return {
        "tanh_rnn": (tanh_rnn, (0.5 * rng(seed).standard_normal((4, 4)),
                                rng(seed + 1).standard_normal((4, 3)),
                                rng(seed + 2).standard_normal(4),
                                rng(seed + 3).standard_normal((T, 3)))),
        "lstm": (lstm, (0.3 * rng(seed).standard_normal((12, 3)),
                        0.3 * rng(seed + 1).standard_normal((12, 2)),
                        rng(seed + 2).standard_normal(12), rng(seed + 3).standard_normal((T, 2)))),
        "two_layer": (two_layer, (0.4 * rng(seed).standard_normal((3, 3)),
                                  0.4 * rng(seed + 1).standard_normal((3, 3)),
                                  rng(seed + 2).standard_normal((T, 3)))),
    }


def _loops(g: Graph) -> int:
    return sum(x.prim is P.loop for x in g.eqns)


@pytest.mark.parametrize("name,n_rec", [("tanh_rnn", 1), ("lstm", 1), ("two_layer", 2)])
def test_long_nonlinear_recurrences_roll_before_batching(name, n_rec):
    f, args = _long(20, 40)[name]
    e = check(f, args, argnums=tuple(range(len(args))))
    # each recurrence (two_layer: one per layer) is a loop on the trace, before batching
    assert _loops(e.stages["roll"]) == n_rec
    assert len(e.stages["roll"].eqns) < len(e.stages["traced"].eqns)
    assert len(recurrences(e)) == n_rec
    assert _loops(e.stages["simplify"]) == n_rec


@pytest.mark.parametrize("name", ["tanh_rnn", "lstm", "two_layer"])
def test_rolling_first_gives_the_graph_rolling_after_batching_gives(name, monkeypatch):
    """The roll stage changes when a recurrence is rolled, not what it becomes: without it
    (batching first, then the scans pass) the compiled gradient is the same graph (the loop
    may be attributed to another line of its step)."""
    from vecgrad import pipeline

    f, args = _long(30, 40)[name]
    argnums = tuple(range(len(args)))

    def final():
        def g(*a):  # (a new function: a compile of its own)
            return f(*a)
        e, _ = vg.grad(g, argnums=argnums).entry(*args)
        return re.sub(r"#.*", "", pretty(e.stages["final"]))
    first = final()
    monkeypatch.setattr(pipeline, "FORWARD", tuple(s for s in pipeline.FORWARD
                                                   if s.name != "roll"))
    assert final() == first


def test_independent_copies_are_batched_before_rolling():
    """Five RNNs of one shape, one after the other: none is rolled on the trace (the regions
    found hold one of the five copies); batching merges them into one recurrence on a
    batched state, which the scans pass rolls into one loop."""
    args = (0.5 * rng(9).standard_normal((3, 3)), rng(10).standard_normal((5, 24, 3)))
    e = check(independent_rnns, args, argnums=(0, 1))
    assert _loops(e.stages["roll"]) == 0
    assert _loops(e.stages["simplify"]) == 1


def short_sin_chain(x):
    h = x[0]
    for t in range(1, 6):
        h = vnp.sin(h) + x[t]
    return vnp.sum(h ** 2)


def exp_terms_accumulated(x):
    s = vnp.zeros(x.shape[1])
    for t in range(x.shape[0]):
        s = s + vnp.exp(vnp.sin(x[t]))  # nonlinear work off the carry: a sum batching makes
    return vnp.sum(s ** 2)


@pytest.mark.parametrize("f,x", [
    (short_sin_chain, rng(40).standard_normal((6, 4))),  # a chain under MIN_CHAIN
    (exp_terms_accumulated, rng(41).standard_normal((64, 4))),  # linear in the carry
], ids=["short", "linear_carry"])
def test_what_batching_can_break_is_not_rolled_first(f, x):
    e = check(f, (x,))
    assert _loops(e.stages["roll"]) == 0
