"""The roll stage's gate (batch/scans.recurrences; issue 11: a search costs nothing on programs
it finds nothing in). The search for recurrences to roll before batching costs about what
batching does; it runs only where the trace has a long chain of nonlinear operations (or of
products of scalars) on one path that a region it keeps could lie on: no write on it (the
steps of `_sequential`'s and `_scaled`'s regions hold none) and, for the decays, scalar
results or elementwise operations only. A chain through a buffer's versions (a write, a read after it, the next write) links
every update of the buffer however independent they are: counted, it sent scatter loops of
scalar products (per-bucket averages, rounds of updates at shuffled positions) to a search
that found nothing, a fifth of their compile.

Each gate must be necessary: on every graph here, where its search (run without the gate)
rolls a region, the gate said yes. Near misses (recurrences and updates through buffers,
long enough that a path through the buffer's versions passes the thresholds) it passes over."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_scalar_decays import PROGRAMS as DECAYS
from test_scans import _long, check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.batch import scans as S
from vecgrad.ir import Graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns import PATTERNS


def traced(f, args, argnums=0) -> Graph:
    with vg.config(keep_stages=True):
        return vg.grad(f, argnums=argnums).entry(*args)[0].stages["traced"]


def gates(g: Graph) -> tuple[bool, bool]:
    """(the nonlinear gate, the scalar-decay gate) on g."""
    return (S._nonlinear_depth(g) >= S.MIN_CHAIN,
            S.scaled_gate(g))


def searched(g: Graph) -> tuple[int, int]:
    """Regions each search rolls on g when run without its gate."""
    return tuple(len(S.roll(g, S._emit_batched, keep, rounds=12)[1])
                 for keep in (S._sequential, S._scaled))


def assert_necessary(g: Graph) -> tuple[bool, bool]:
    said, rolled = gates(g), searched(g)
    for name, yes, n in zip(("nonlinear", "scaled"), said, rolled):
        assert yes or not n, f"the {name} search rolled {n} regions its gate passed over"
    return said


def through_everything(g: Graph, nl: frozenset, scalar: bool = False) -> int:
    """The longest chain of `nl` operations on any path, writes and arrays included (the
    gate before it was limited to what a kept region's steps hold)."""
    depth: dict = {}
    best = 0
    for e in g.eqns:
        d = max([depth.get(a, 0) for a in e.inputs], default=0)
        d += e.prim in nl and not (scalar and e.out.aval.shape)
        depth[e.out] = d
        best = max(best, d)
    return best


# ------------------------------------------------------------ where the searches roll

POSITIVE = [(f"{f.__name__}", f, make(rng(5), 60)) for f, make in DECAYS] + \
    [(name, f, args) for name, (f, args) in _long(7, 30).items()]


@pytest.mark.parametrize("name,f,args", POSITIVE, ids=[c[0] for c in POSITIVE])
def test_gates_pass_what_their_search_rolls(name, f, args):
    g = traced(f, args, tuple(range(len(args))))
    assert any(searched(g))  # (a region is rolled: the check has teeth)
    assert any(assert_necessary(g))


# ------------------------------------------------------------ chains through buffers

def bucket_average(x, k):
    """A per-bucket exponential average read before its update (traced bucket ids)."""
    e = vnp.full(5, 0.5)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + (x[i] - e[k[i]]) ** 2
        e[k[i]] = 0.8 * e[k[i]] + 0.2 * x[i]
    return loss


def shuffled_rounds(x, a, order):
    """Rounds of buf[i] = buf[i] * a[i] + x[i] at Python-int positions in a shuffled order."""
    buf = vnp.ones(x.shape[0])
    for _ in range(3):
        for i in order:
            buf[i] = buf[i] * a[i] + x[i]
    return np.sum(np.sin(buf))


def learned_rate(x, a, k):
    """A prediction per bucket decayed at a learned 0-d rate (traced ids)."""
    e = vnp.zeros(4)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + e[k[i]] * x[i]
        e[k[i]] = a * e[k[i]] + x[i]
    return loss


def tanh_through_buffer(x):
    """A nonlinear recurrence whose carry lives in a buffer (h[t] from h[t - 1]): batching's
    and the scans pass's, not the trace search's (its steps would hold the writes)."""
    h = vnp.zeros(x.shape[0])
    h[0] = x[0]
    for t in range(1, x.shape[0]):
        h[t] = np.tanh(0.9 * h[t - 1]) + x[t]
    return np.sum(h ** 2)


def scaled_through_buffer(a, x):
    """A linear recurrence of scalars whose carry lives in a buffer (c[i] from c[i - 1])."""
    c = vnp.ones(a.shape[0])
    for i in range(1, a.shape[0]):
        c[i] = c[i - 1] * a[i] + x[i]
    return np.sum(c ** 2)


def sqrt_updates_at_ints(x):
    """Square roots written back at each position, several passes (independent elements)."""
    buf = x * x + 1.0
    for _ in range(2):
        for i in range(x.shape[0]):
            buf[i] = np.sqrt(buf[i] + 1.0)
    return np.sum(buf)


def _ids(n, b, seed):
    return rng(seed).integers(0, b, n)


NEAR = [
    ("bucket_average", bucket_average, (rng(1).standard_normal(70), _ids(70, 5, 2)), 0),
    ("shuffled_rounds", shuffled_rounds,
     (rng(3).standard_normal(24), 0.5 + 0.4 * rng(4).random(24),
      [int(i) for i in rng(5).permutation(24)]), (0, 1)),
    ("learned_rate", learned_rate, (rng(6).standard_normal(60), np.float64(0.9), _ids(60, 4, 7)),
     (0, 1)),
    ("tanh_through_buffer", tanh_through_buffer, (rng(8).standard_normal(40),), 0),
    ("scaled_through_buffer", scaled_through_buffer,
     (rng(9).uniform(0.9, 1.1, 40), rng(10).standard_normal(40)), (0, 1)),
    ("sqrt_updates_at_ints", sqrt_updates_at_ints, (rng(11).standard_normal(20),), 0),
]


@pytest.mark.parametrize("name,f,args,argnums", NEAR, ids=[c[0] for c in NEAR])
def test_gates_pass_over_chains_through_buffers(name, f, args, argnums):
    check(f, args, argnums=argnums)  # (values and gradients as NumPy's and as unrolled)
    g = traced(f, args, argnums)
    # (teeth: through the buffer's versions, a chain past a threshold)
    assert through_everything(g, S._NONLINEAR) >= S.MIN_CHAIN or \
        through_everything(g, S._SCALING, scalar=True) >= S.MIN_SCALED
    assert assert_necessary(g) == (False, False)


# The benchmark's programs whose gates opened through buffers (at a size where the chain
# through the buffer passes the thresholds), and a sample of others with decays and writes
SAMPLE = ["ema_prediction", "learned_rate_prediction", "bucket_product_iadd", "decay_rounds",
          "two_column_writes", "layernorm_inplace", "center_rows_inplace", "rows_then_columns",
          "coo_matvec_loop", "bias_corrected_ema", "clipped_growth"]


@pytest.mark.parametrize("name", SAMPLE)
def test_gates_are_necessary_on_benchmark_programs(name):
    p = PATTERNS[name]
    assert_necessary(traced(p.natural, p.args("small"), p.argnums))
