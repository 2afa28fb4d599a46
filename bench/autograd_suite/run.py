"""Run HIPS autograd's test suite against vecgrad (see README.md in this folder).

    python bench/autograd_suite/run.py --autograd PATH [--json out.json] [-k EXPR] [--files ...]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = HERE / "shim"
# Files whose functions issue 10 lists (NumPy, linalg, fft, scipy, complex numbers, composed
# transforms): the target is that 90% of their tests pass.
IN_SCOPE = ["test_numpy.py", "test_systematic.py", "test_linalg.py", "test_fft.py",
            "test_scipy.py", "test_binary_ops.py", "test_scalar_ops.py", "test_complex.py",
            "test_truediv.py", "test_jacobian.py", "test_wrappers.py", "test_direct.py",
            "test_ufunc_dispatch.py", "test_graphs.py"]
# Files that test autograd's own machinery (tracer, boxes, vector spaces, primitive registry,
# container boxes): vecgrad has no such objects.
INTERNALS = ["test_core.py", "test_vspaces.py", "test_tests.py", "test_builtins.py",
             "test_misc.py", "test_logic.py", "test_dict.py", "test_list.py", "test_tuple.py"]


def export_tests(src: Path, dest: Path) -> Path:
    """Copy the checkout's tests/ folder (a work tree, or a git directory without one)."""
    if (src / "tests").is_dir():
        shutil.copytree(src / "tests", dest / "tests")
    else:
        tar = subprocess.run(["git", "--git-dir", str(src), "archive", "HEAD", "tests"],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    (dest / "pytest.ini").write_text("[pytest]\n")
    return dest / "tests"


def run_pytest(tests: Path, files: list[str], k: str | None, timeout: float) -> Path:
    junit = tests.parent / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", 
           "--continue-on-collection-errors",
           f"--junitxml={junit}", "--rootdir", str(tests.parent), "-c",
           str(tests.parent / "pytest.ini"), *[str(tests / f) for f in files]]
    if k:
        cmd += ["-k", k]
    env = dict(os.environ, PYTHONPATH=str(SHIM), PYTHONWARNINGS="ignore")
    subprocess.run(cmd, check=False, cwd=tests.parent, env=env, timeout=timeout,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return junit


def outcomes(junit: Path) -> dict[str, Counter]:
    """file -> Counter of passed / failed / error / skipped."""
    per: dict[str, Counter] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        where = case.get("file") or case.get("classname") or case.get("name", "")
        f = where.split("/")[-1].removesuffix(".py").split(".")[-1] + ".py"  # a collection
        # error has no classname: its name is the module's dotted path
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind = {"failure": "failed"}.get(child.tag, child.tag)
        per.setdefault(f, Counter())[kind] += 1
    return per


def report(per: dict[str, Counter]) -> dict:
    def total(files: list[str]) -> Counter:
        c: Counter = Counter()
        for f in files:
            c += per.get(f, Counter())
        return c
    groups = {"in scope (issue 10's lists)": sorted(f for f in per if f in IN_SCOPE),
              "autograd internals": sorted(f for f in per if f in INTERNALS),
              "other": sorted(f for f in per if f not in IN_SCOPE and f not in INTERNALS)}
    print(f"{'file':28s} {'passed':>7s} {'failed':>7s} {'error':>6s} {'skipped':>8s}")
    summary = {}
    for name, files in groups.items():
        for f in files:
            c = per[f]
            print(f"{f:28s} {c['passed']:7d} {c['failed']:7d} {c['error']:6d} {c['skipped']:8d}")
        t = total(files)
        n = sum(t.values()) - t["skipped"]
        rate = t["passed"] / n if n else 0.0
        print(f"  {name}: {t['passed']} of {n} pass ({rate:.0%})\n")
        summary[name] = {"passed": t["passed"], "run": n, "rate": rate, "files": {
            f: dict(per[f]) for f in files}}
    everything = total(list(per))
    n = sum(everything.values()) - everything["skipped"]
    print(f"all files: {everything['passed']} of {n} pass")
    summary["all"] = {"passed": everything["passed"], "run": n}
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--autograd", type=Path, required=True,
                    help="a checkout of github.com/HIPS/autograd (work tree or git directory)")
    ap.add_argument("--files", nargs="*", help="test files to run (default: all test_*.py)")
    ap.add_argument("-k", help="pytest -k expression")
    ap.add_argument("--json", type=Path, help="write the summary here")
    ap.add_argument("--timeout", type=float, default=3600.0)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tests = export_tests(a.autograd, Path(tmp))
        files = a.files or sorted(p.name for p in tests.glob("test_*.py"))
        per = outcomes(run_pytest(tests, files, a.k, a.timeout))
    summary = report(per)
    if a.json:
        a.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
