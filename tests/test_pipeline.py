"""The pipeline is declared once (vecgrad.pipeline): the README states it, staging runs it,
explain and vg.show read it."""
from __future__ import annotations

import io
import pathlib
import re
from types import SimpleNamespace

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import pipeline
from vecgrad.explain_text import _summary

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def readme_pipeline() -> str:
    text = README.read_text()
    m = re.search(r"The pipeline is\s+`([^`]*)`", text)
    assert m, "README: 'The pipeline is `...`' not found"
    return " ".join(m.group(1).split())


def test_readme_states_the_declared_pipeline():
    assert readme_pipeline() == pipeline.describe()


def loss(w, x):
    h = vnp.tanh(x @ w)
    return vnp.sum(h * h)


def args():
    r = np.random.default_rng(0)
    return r.standard_normal((4, 3)), r.standard_normal((5, 4))


def test_compiled_entry_keys_are_declared():
    """Every stage a compiled gradient times or keeps is one the declaration lists, in its
    order (so explain's breakdown and vg.show's order miss nothing)."""
    with vg.config(keep_stage_eqns=10_000):
        entry, _ = vg.grad(loss).entry(*args())
    times = pipeline.timing_keys()
    assert set(entry.times) <= set(times), set(entry.times) - set(times)
    assert [k for k in times if k in entry.times] == list(entry.times)
    graphs = pipeline.graph_keys()
    assert set(entry.stages) <= set(graphs), set(entry.stages) - set(graphs)
    for s in pipeline.BACKWARD:
        assert pipeline.GRAD + s.name in entry.times


def test_show_follows_the_pipeline():
    text = vg.show(loss, *args(), file=io.StringIO())
    assert text.startswith(f"=== pipeline: {pipeline.describe()}")
    heads = re.findall(r"^=== (\S+):", text, re.MULTILINE)[1:]
    order = pipeline.graph_keys()
    assert heads and heads == sorted(heads, key=order.index)


def test_explain_summary_lists_every_timed_stage():
    entry, _ = vg.grad(loss).entry(*args())

    stats = SimpleNamespace(min=0.0, median=0.0, runs=1)
    r = SimpleNamespace(compile_stages=dict(entry.times), ratio=1.0, compile_seconds=0.0,
                        eqns={}, forward=stats, gradient=stats)  # the fields _summary reads
    line = next(s for s in _summary(r) if "first call" in s)
    for k in entry.times:
        assert f"{k} " in line, (k, line)


def test_backends_lower_passes_are_declared():
    from vecgrad import backends
    names = {s.name for s in pipeline.LOWER}
    for b in backends.NAMES:
        if backends.available(b):
            assert set(backends.get(b).lower_passes) <= names
