"""The quick looks before batching's optional passes (issue 11: a pass costs nothing on
programs it does not apply to). Each look must be a necessary condition of its pass: on every
graph here, where the pass changes the graph, its look said yes; and it says no on programs
that have the primitives the pass acts on, but not in the shape it rewrites (where the pass
would walk the whole graph for nothing, about 1 us per traced operation)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import test_decayed_scatters as decays_cases
import test_rmw_chains as rmw_cases
import test_scatter_extremes as extremes_cases
import test_sibling_buffers as sibling_cases

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch import decays, extremes, rmwchains, siblings
from vecgrad.batch.chains import normalize
from vecgrad.ir import Graph, dce, uses

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns import PATTERNS

R = np.random.default_rng(24)

GATES = {"decays": (decays.decayed_scatters, decays.scale_scatters),
         "extremes": (extremes.scatter_extremes, extremes.join_extremes),
         "siblings": (siblings.sibling_writes, siblings.stack_siblings)}


def batch_input(f, args, argnums=0) -> Graph:
    """The graph batching's optional passes look at (as `batching._batch_once` makes it)."""
    g = vg.grad(f, argnums=argnums).entry(*args)[0].stages["roll"]
    return dce(normalize(g, uses(g)))


def assert_necessary(g: Graph) -> dict[str, bool]:
    """Each look's answer on g, checked against what its pass does."""
    said = {}
    for name, (look, run) in GATES.items():
        said[name] = look(g)
        if run(g) is not g:
            assert said[name], f"{name}: the pass changed a graph its look passed over"
    return said


# ---------------------------------------------------------------- where the passes apply

def _sq(f):
    def loss(*a):
        return np.sum(f(*a) ** 2)
    return loss


POSITIVE = [("decays", _sq(f), args) for f, args in decays_cases.CASES] + [
    ("extremes", extremes_cases.scatter_max,
     (R.standard_normal(10), R.integers(0, 10, 17), R.integers(-6, 6, 17))),
    ("extremes", extremes_cases.scatter_min_rows, (R.standard_normal((9, 3)), R.integers(0, 4, 9))),
    ("extremes", _sq(extremes_cases.builtin_max_traced),
     (R.standard_normal(23), R.integers(-7, 7, 23))),
    ("extremes", _sq(extremes_cases.builtin_min_static_ints), (R.standard_normal(7),)),
] + [("siblings", f, (R.standard_normal((6, 3)), R.standard_normal((6, 3))))
     for f in sibling_cases.PAIRS  # (a recurrence, and rows filled by an inner loop: not
     if f not in (sibling_cases.recurrence, sibling_cases.rows_in_inner_loop)]  # stacked here)


@pytest.mark.parametrize("name,f,args", POSITIVE)
def test_looks_pass_what_their_pass_rewrites(name, f, args):
    g = batch_input(f, args)
    assert GATES[name][1](g) is not g  # (the pass applies: the check below has teeth)
    assert assert_necessary(g)[name]


# ------------------------------------------------- the primitives, not the shape rewritten

def coo_scaled(vals, x, rows, cols):
    """Scatters of values scaled by constants, into a buffer never scaled itself."""
    y = vnp.zeros(5)
    for k in range(len(vals)):
        y[rows[k]] += 2.0 * vals[k] * x[cols[k]]
    return np.sum(np.sqrt(y ** 2 + 1.0))


def scaled_then_dense(X, idx):
    """A buffer scaled every step, then added to densely (a scan's, not a scatter)."""
    buf = vnp.zeros(4)
    for i in range(len(X)):
        buf = buf * 0.9 + X[i]
    out = vnp.zeros(4)
    out[idx[0]] += 1.5 * X[0, 0]
    return np.sum(buf * out)


def add_at_no_decay(x, idx):
    buf = vnp.zeros(6)
    for i in range(len(x) - 1):
        np.add.at(buf, idx[i:i + 2], x[i:i + 2] * 3.0)
    return np.sum(buf ** 2)


def maxima_in_fresh_buffers(x, idx):
    """Writes of maxima, each into a buffer of its own (no chain of two)."""
    total = 0.0
    for i in range(len(x)):
        buf = vnp.zeros(3)
        buf[idx[i]] = np.maximum(x[i], 0.5)
        total = total + np.sum(buf * 2.0)
    return total


def clipped_rows(X):
    """Maxima and writes in one program, the writes not of maxima."""
    out = vnp.zeros(X.shape)
    for i in range(X.shape[0]):
        out[i] = X[i] * 2.0
    return np.sum(np.maximum(out, 0.1) ** 2)


def softmax_written_back(a):
    """seeds/000's second loop: each column read, then written back through a softmax (writes
    after reads of their buffer, none of them affine in the read)."""
    out = a * 1.0
    for k in range(a.shape[1]):
        out[:, k] = vg.nn.softmax(out[:, k], axis=0)
    return np.sum(out * a)


NEGATIVE = [
    ("decays", coo_scaled, (R.standard_normal(9), R.standard_normal(5), R.integers(0, 5, 9),
                            R.integers(0, 5, 9))),
    ("decays", scaled_then_dense, (R.standard_normal((8, 4)), R.integers(0, 4, 8))),
    ("decays", add_at_no_decay, (R.standard_normal(9), R.integers(0, 6, 9))),
    ("extremes", maxima_in_fresh_buffers, (R.standard_normal(6), R.integers(0, 3, 6))),
    ("extremes", clipped_rows, (R.standard_normal((5, 3)),)),
    ("siblings", clipped_rows, (R.standard_normal((5, 3)),)),  # (one buffer filled in place)
    ("siblings", softmax_written_back, (R.standard_normal((6, 5)),)),
]


@pytest.mark.parametrize("name,f,args", NEGATIVE)
def test_looks_pass_over_near_misses(name, f, args):
    g = batch_input(f, args)
    assert not assert_necessary(g)[name]


# A sample of the benchmark's programs with scatters, writes, maxima and scalings (the
# looks' primitives): every look is necessary there too
SAMPLE = ["coo_matvec_loop", "coo_rescaled_matvec", "weighted_histogram", "gat_attention",
          "maximum_rmw_rows", "builtin_max_rmw", "traced_index_max", "rebound_above_low",
          "conv2d", "add_at_histogram", "multiply_at_scales", "layernorm_inplace",
          "bilinear_splat", "clip_node_updates"]


@pytest.mark.parametrize("name", SAMPLE)
def test_looks_are_necessary_on_benchmark_programs(name):
    p = PATTERNS[name]
    assert_necessary(batch_input(p.natural, p.args("small"), p.argnums))


def test_one_census_serves_the_looks_of_a_graph():
    """census(g) is g's primitives, for whichever graph is asked, in any order (it keeps the
    last graph's only while that graph lives)."""
    from vecgrad.batch.census import census
    graphs = [batch_input(f, args) for _, f, args in POSITIVE[:2] + NEGATIVE[-2:]]
    for g in graphs + graphs[::-1] + graphs:
        assert census(g) == {e.prim for e in g.eqns}
        assert census(g) is census(g)  # (counted once)
    g = graphs[0]
    h = g.replace(eqns=g.eqns[:1])  # (another graph with some of the same equations)
    assert census(h) == {g.eqns[0].prim} and census(g) == {e.prim for e in g.eqns}


# ------------------------------------------ rmwchains: its candidates, and what it counts

def _all_links(g: Graph) -> set[int]:
    """The places in g of every write or add that is a link by itself and reads its buffer
    (each finder run on every equation of its primitive, not only on the quick pass's
    candidates). An add that reads nothing (`x[k] += v`) joins a chain only after a link that
    does, whose result the quick pass follows."""
    defs, order, reads = rmwchains._tables(g)
    n_uses = uses(g)
    found = [(i, rmwchains._FINDERS[e.prim](e, defs, n_uses, reads, order))
             for i, e in enumerate(g.eqns) if e.prim in rmwchains._FINDERS]
    return {i for i, ln in found if ln is not None and ln.read is not None}


RMW = [(f, make(ix)) for f, make in rmw_cases.CASES
       for ix in (rmw_cases._traced, rmw_cases._static)]


@pytest.mark.parametrize("f,args", RMW, ids=[f"{f.__name__}-{k}" for k, (f, _) in
                                             enumerate(RMW)])
def test_rmw_candidates_hold_every_link(f, args):
    g = batch_input(f, args)
    assert rmwchains.join_affine_rmw(g) is not g  # (the pass applies: links exist)
    links = _all_links(g)
    assert links and links <= {i for i, _ in rmwchains._writes_after_reads(g)}


@pytest.mark.parametrize("name", SAMPLE + ["bucket_ema_traced", "bucket_ema_static"])
def test_rmw_candidates_hold_every_link_in_benchmark_programs(name):
    p = PATTERNS[name]
    g = batch_input(p.natural, p.args("small"), p.argnums)
    links = _all_links(g)
    assert links <= {i for i, _ in rmwchains._writes_after_reads(g)}
    assert links or "bucket_ema" not in name  # (the rmw lane's programs: links to find)


def test_rmw_counts_no_uses_where_no_write_is_a_link(monkeypatch):
    """Writes after reads that are not links (a softmax written back): the pass returns the
    graph without counting every value's uses, the biggest of its tables."""
    g = batch_input(softmax_written_back, (R.standard_normal((6, 5)),))
    assert len(rmwchains._writes_after_reads(g)) == 5

    def no_count(g):
        raise AssertionError("uses(g) counted")
    monkeypatch.setattr(rmwchains, "uses", no_count)
    assert rmwchains.join_affine_rmw(g) is g
    # (where a link is found, its uses are asked: the count is made then)
    f, args = RMW[0]
    with pytest.raises(AssertionError, match="counted"):
        rmwchains.join_affine_rmw(batch_input(f, args))


def test_adds_are_no_candidates_without_a_scatter():
    """An add into a buffer read before (`buf = buf + buf[k] * 2`) with no scatter in the
    graph: no add can be a link (a link's add adds a scatter), so none is a candidate; the
    writes after reads still are."""
    def shifted(x):
        buf = vnp.zeros(3)
        for i in range(len(x)):
            buf = buf + buf[i % 3] * 2.0
            buf[(i + 1) % 3] = buf[(i + 1) % 3] * 0.5 + x[i]
        return np.sum(buf ** 2)
    g = batch_input(shifted, (R.standard_normal(9),))
    assert any(e.prim is P.add and any(a in {d.inputs[0] for d in g.eqns if d.prim is P.getitem}
                                       for a in e.inputs) for e in g.eqns)  # (teeth)
    todo = [e.prim for _, e in rmwchains._writes_after_reads(g)]
    assert todo and P.add not in todo
