"""The command line: `python -m vecgrad demo --small`, `bench` (with and without
--baselines) and `explain script.py:function`."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vecgrad import cli
from vecgrad.examples.seeds import WORKLOADS

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, pre: str = "") -> subprocess.CompletedProcess:
    """`python -m vecgrad ARGS` from the repo root; `pre` is Python run first (to hide
    packages)."""
    cmd = ["-m", "vecgrad", *args]
    if pre:
        cmd = ["-c", (f"{pre}; import sys; from vecgrad.cli import main; "
               f"sys.exit(main({list(args)!r}))")]
    return subprocess.run([sys.executable, *cmd], check=False, capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def table_rows(text: str) -> dict[str, list[str]]:
    """Rows of the printed table, keyed by seed name, split on runs of 2+ spaces."""
    rows = {}
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in WORKLOADS:
            rows[cells[0]] = cells
    return rows


def test_demo_small_prints_one_row_per_seed():
    p = run("demo", "--small", "--budget", "0.02")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("Loops and maps found") == 3
    for w in WORKLOADS.values():
        assert f"vecgrad.explain: gradient of {w.loss.__name__}" in p.stdout
    assert "Where the gradient's time goes" not in p.stdout  # the short form
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
    p = run("bench", "--sizes", "small", "--only", "000", "--repeat", "2", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "Cache-hit overhead" in p.stdout and "Baselines" not in p.stdout
    assert sorted(table_rows(p.stdout)) == ["000"]
    data = json.loads(out.read_text())
    (rec,) = data["workloads"]
    assert rec["seed"] == "000" and rec["sizes"] == "small"
    assert rec["grad"]["runs"] == 2
    assert set(rec["eqns"]) == {"traced", "cse", "batch", "grad"}
    assert rec["eqns"]["traced"] > 0 and rec["eqns"]["grad"] > 0
    assert rec["value"] == pytest.approx(rec["value_numpy"], rel=1e-5)
    assert set(data["cache_hit_overhead_s"]) == {"grad", "jit"}
    assert "baselines" not in data


def test_bench_rejects_unknown_seed():
    p = run("bench", "--only", "999")
    assert p.returncode == 2
    assert "unknown seed" in p.stderr


def test_bench_plot_needs_baselines():
    p = run("bench", "--plot", "x.png")
    assert p.returncode == 2 and "--plot needs --baselines" in p.stderr


# ------------------------------------------------------------------ bench --baselines

ENGINES = {"torch": ["torch eager, loop", "torch eager, vectorized", "vecgrad torch backend, loop"],
           "jax": ["jax jit(grad), vectorized", "vecgrad jax backend, loop"],
           "autograd": ["autograd, loop"]}


@pytest.fixture(scope="module")
def baselines(tmp_path_factory):
    """One `bench --baselines --sizes small` run (000 and 002) with JSON and a plot."""
    d = tmp_path_factory.mktemp("bench")
    p = run("bench", "--sizes", "small", "--only", "000,002", "--repeat", "2", "--baselines",
            "--json", str(d / "b.json"), "--plot", str(d / "b.png"))
    assert p.returncode == 0, p.stderr
    return p, json.loads((d / "b.json").read_text()), d / "b.png"


def test_baselines_report_numpy_and_vecgrad(baselines):
    p, data, _ = baselines
    assert "Gradient, seed 000" in p.stdout and "Gradient, seed 002" in p.stdout
    assert "x numpy fwd (min)" in p.stdout and "[baselines] 002: vecgrad grad" in p.stderr
    by = {(r["seed"], r["engine"]): r for r in data["baselines"]}
    for seed in ["000", "002"]:
        ref, vec = by[seed, "numpy forward, vectorized"], by[seed, "vecgrad grad, loop"]
        assert ref["ratio"] == 1.0 and ref["runs"] == 2 and ref["memory"] > 0
        assert vec["ratio"] > 0 and vec["memory"] > 0 and vec["grad_err"] == 0.0
        assert vec["min"] <= vec["median"] and vec["min"] <= vec["mean"]
    labels = [label for group in ENGINES.values() for label in group]
    for label in labels:  # every engine either ran or says why not
        assert (("000", label) in by) != (label in data["skipped"]), label


@pytest.mark.parametrize("module", sorted(ENGINES))
def test_baseline_engine_agrees_with_vecgrad(baselines, module):
    pytest.importorskip(module)
    p, data, _ = baselines
    by = {(r["seed"], r["engine"]): r for r in data["baselines"]}
    for label in ENGINES[module]:
        for seed in ["000", "002"]:
            r = by[seed, label]
            assert r["grad_err"] < 1e-4, r
            assert r["ratio"] > 0 and r["runs"] == 2
            assert (r["memory"] is None) == (module != "autograd")
            assert label in p.stdout
    if module == "jax":
        assert all(by[s, ENGINES["jax"][0]]["compile_s"] > 0 for s in ["000", "002"])
        assert "compile of jax jit(grad), vectorized on 000" in p.stdout
        assert "vecgrad jax backend, loop / jax jit(grad), vectorized" in p.stdout


def test_gpu_run_skips_cleanly_without_a_gpu():
    p = run("bench", "--device", "gpu", "--sizes", "small", "--only", "000", "--repeat", "2")
    assert p.returncode == 0, p.stderr
    if "GPU run skipped: no GPU found" not in p.stdout:  # (a machine with a GPU)
        assert "GPU run: " in p.stdout and "Gradient, seed 000" in p.stdout


def test_patterns_on_the_backends(x64):
    """The patterns path of the GPU run, on the CPU: gradients equal the NumPy backend's."""
    import importlib.util
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import on_backends
    devices = {m: "cpu" for m in ("jax", "torch") if importlib.util.find_spec(m)}
    if not devices:
        pytest.skip("neither jax nor torch is installed")
    if "jax" in devices:
        import jax
        devices["jax"] = jax.devices("cpu")[0]
    recs = on_backends.run(devices, "small", repeat=2, names=["attention_rows"])
    assert [r["backend"] for r in recs] == list(devices)
    for r in recs:
        assert "failed" not in r, r
        assert r["grad_err"] < 1e-12 and r["reference"] is not None and r["grad"].min > 0
    assert "attention_rows" in on_backends.report(recs)


def test_baselines_plot_is_a_png(baselines):
    pytest.importorskip("matplotlib")
    _, _, png = baselines
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_baselines_skip_cleanly_without_engines(tmp_path):
    hide = "import sys; sys.modules.update(torch=None, jax=None, autograd=None, matplotlib=None)"
    p = run("bench", "--sizes", "small", "--only", "002", "--repeat", "2", "--baselines",
            "--plot", str(tmp_path / "x.png"), pre=hide)
    assert p.returncode == 0, p.stderr
    for label in [lbl for group in ENGINES.values() for lbl in group]:
        assert f"skipped {label}: " in p.stdout and "is not installed" in p.stdout
    assert "--plot skipped: matplotlib is not installed" in p.stdout
    assert "vecgrad grad, loop" in p.stdout and not (tmp_path / "x.png").exists()


# ------------------------------------------------------------------ explain


def test_explain_example_script():
    p = run("explain", "examples/pairwise.py:pairwise_loss", "--budget", "0.02")
    assert p.returncode == 0, p.stderr
    assert "vecgrad.explain: gradient of pairwise_loss" in p.stdout
    # 16 * 4 * 16 calls of cosinesim at the sizes of examples/pairwise.py.
    assert re.search(r"1,024 x  pairwise\.py:\d+ in cosinesim", p.stdout), p.stdout
    assert "Memory" in p.stdout


def test_explain_short():
    p = run("explain", "examples/pairwise.py:pairwise_loss", "--budget", "0.02", "--short")
    assert p.returncode == 0, p.stderr
    assert "Loops and maps found" in p.stdout and "Memory" not in p.stdout


def test_explain_help_documents_the_convention():
    p = run("explain", "--help")
    assert p.returncode == 0
    assert "example_args()" in p.stdout and "example_argnums" in p.stdout


def write(tmp_path: Path, text: str) -> str:
    f = tmp_path / "user.py"
    f.write_text(text)
    return str(f)


@pytest.mark.parametrize("case, message", [
    ("missing_file", "no such file"),
    ("missing_function", "defines no function 'nope'"),
    ("missing_example_args", "defines no example_args()"),
    ("not_a_tuple", "must return a tuple"),
    ("raises_on_import", "raised ZeroDivisionError on import"),
    ("no_colon", "expected path/to/script.py:function"),
])
def test_explain_errors_exit_2_without_traceback(tmp_path, case, message):
    good = "import vecgrad.numpy as vnp\ndef f(x):\n    return vnp.sum(x * x)\n"
    target = {  # built lazily: each case writes its own user.py
        "missing_file": lambda: str(tmp_path / "absent.py") + ":f",
        "missing_function": lambda: write(
            tmp_path, good + "def example_args():\n    return (1.0,)\n") + ":nope",
        "missing_example_args": lambda: write(tmp_path, good) + ":f",
        "not_a_tuple": lambda: write(tmp_path, good + "def example_args():\n    return 3\n")
        + ":f",
        "raises_on_import": lambda: write(tmp_path, "1 / 0\n") + ":f",
        "no_colon": lambda: "examples/pairwise.py",
    }[case]()
    p = run("explain", target)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr
    assert "Traceback" not in p.stderr


def test_backends_bench_side_by_side():
    """bench/backends.py: each installed backend next to its library's vectorized gradient,
    gradients checked, ratio rows printed; its GPU run skips cleanly without a GPU."""
    import importlib.util
    mods = [m for m in ("jax", "torch") if importlib.util.find_spec(m)]
    if not mods:
        pytest.skip("neither jax nor torch is installed")
    script = str(ROOT / "bench" / "backends.py")
    p = subprocess.run([sys.executable, script, "--sizes", "small", "--only", "002",
                        "--rounds", "5", "--budget", "0"], capture_output=True, text=True,
                       timeout=300, cwd=ROOT, check=False)
    assert p.returncode == 0, p.stderr[-2000:]
    pairs = {"jax": "vecgrad jax backend / jax jit(grad), vectorized",
             "torch": "vecgrad torch backend / torch eager, vectorized"}
    for m in mods:
        assert pairs[m] in p.stdout
    errs = [float(c) for line in p.stdout.splitlines() if line.startswith("002 ")
            for c in re.split(r"\s{2,}", line.strip())[6:7] if c]
    assert errs and max(errs) < 1e-10  # float64: every engine's gradient equals NumPy's
    g = subprocess.run([sys.executable, script, "--device", "gpu", "--sizes", "small",
                        "--only", "002", "--rounds", "5"], capture_output=True, text=True,
                       timeout=300, cwd=ROOT, check=False)
    assert g.returncode == 0, g.stderr[-2000:]
    assert "GPU run skipped" in g.stdout or "Backends against" in g.stdout
