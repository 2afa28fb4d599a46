"""The command line: `python -m vecgrad demo --small` and `python -m vecgrad bench`."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest

from vecgrad import cli
from vecgrad.examples.workloads import WORKLOADS


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vecgrad", *args], check=False,
                          capture_output=True, text=True, timeout=300)


def table_rows(text: str) -> dict[str, list[str]]:
    """Rows of the printed table, keyed by seed name, split on runs of 2+ spaces."""
    rows = {}
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in WORKLOADS:
            rows[cells[0]] = cells
    return rows


def test_demo_small_prints_one_row_per_seed():
    p = run("demo", "--small", "--repeat", "3")
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert sorted(rows) == ["000", "001", "002"]
    header = [line for line in p.stdout.splitlines() if line.startswith("seed")]
    assert len(header) == 1 and "grad / numpy fwd" in header[0]
    for name, cells in rows.items():
        assert len(cells) == len(cli.DEMO_HEADER), cells
        ratio = cells[-1]
        assert ratio.endswith("x") and math.isfinite(float(ratio[:-1]))
        assert float(ratio[:-1]) > 0
        w = WORKLOADS[name]
        want = float(w.numpy_forward(*w.inputs("small")))
        assert float(cells[2]) == pytest.approx(want, rel=1e-4)
        assert float(cells[3]) > 0  # gradient norm


def test_demo_rejects_unknown_option():
    p = run("demo", "--no-such-option")
    assert p.returncode == 2
    assert "unrecognized arguments" in p.stderr


def test_command_is_required():
    p = run()
    assert p.returncode == 2


def test_bench_passes_arguments_through(tmp_path):
    out = tmp_path / "b.json"
    p = run("bench", "--sizes", "small", "--only", "002", "--repeat", "2", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "Cache-hit overhead" in p.stdout
    assert sorted(table_rows(p.stdout)) == ["002"]
    data = json.loads(out.read_text())
    (rec,) = data["workloads"]
    assert rec["seed"] == "002" and rec["sizes"] == "small"
    assert rec["grad"]["runs"] == 2
    assert set(rec["eqns"]) == {"traced", "cse", "batch", "grad"}
    assert rec["eqns"]["traced"] > 0 and rec["eqns"]["grad"] > 0
    assert rec["value"] == pytest.approx(rec["value_numpy"], rel=1e-9)
    assert set(data["cache_hit_overhead_s"]) == {"grad", "jit"}


def test_bench_rejects_unknown_seed():
    p = run("bench", "--only", "999")
    assert p.returncode == 2
    assert "unknown seed" in p.stderr
