"""Run GradBench's evals against vecgrad, JAX and PyTorch in one window (see README.md here).

    python bench/gradbench/run.py --gradbench PATH [--evals lse,gmm] [--tools vecgrad,jax,pytorch]
        [--sizes table|quick|default] [--min-seconds S] [--repeat N] [--write-benchmarks]

PATH is a GradBench checkout: a work tree, or a git directory without one (files whose objects
are absent, such as large data files of a partial mirror, are skipped). Nothing of GradBench is
copied into this repository: the checkout is exported to a work folder, its reference C++
`manual` tool is built there with g++ and make (GradBench validates every answer against it),
and a virtual environment outside the repository gets GradBench's Python dependencies, JAX (CPU)
and PyTorch (torch==2.13.0, CPU). Each eval then runs against each tool through a small Python
intermediary that forwards the JSON lines and logs them as GradBench's CLI does.

JAX is timed with `block_until_ready` inside the timed region: GradBench's JAX tool returns
before its asynchronous result exists, so its own figures time only the dispatch. The runner
patches `gradbench.wrap.multiple_runs` in the JAX tool's process at start-up (GradBench's files
are not changed); README.md here gives the one-line upstream fix.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EVALS = ["hello", "lse", "llsq", "ode", "det", "gmm", "lstm", "kmeans", "ba", "ht", "particle",
         "saddle"]
TOOLS = ["vecgrad", "jax", "pytorch", "manual"]
# The evals each GradBench tool implements (its tools/<name>/evals.txt); vecgrad has all.
TOOL_EVALS = {"jax": {"hello", "lse", "llsq", "ode", "gmm", "kmeans"},
              "pytorch": {"hello", "lse", "gmm", "lstm", "kmeans", "ba", "ht"},
              "manual": {"hello", "lse", "llsq", "ode", "det", "gmm", "lstm", "kmeans", "ba",
                         "ht"}}
# Eval arguments per size preset. "default" is GradBench's own; "table" is what BENCHMARKS.md
# reports (GradBench's defaults where a whole eval fits in a few minutes on this 2-core machine,
# else its smaller sizes); "quick" is a smoke test.
SIZES = {
    "default": {e: [] for e in EVALS},
    "table": {
        "hello": [], "particle": [], "saddle": [],
        "lse": [],
        "llsq": ["-n", "16", "64", "256", "1024", "4096"],
        "ode": ["-n", "1000", "10000", "-s", "1", "10", "100"],
        "det": ["-l", "5", "6", "7"],
        "gmm": ["-d", "2", "10", "-k", "5", "10", "25"],
        "lstm": ["-l", "2", "4", "-c", "1024"],
        "kmeans": ["-k", "10", "100", "-n", "1000", "-d", "8", "16"],
        "ba": ["--min", "0", "--max", "0"],
        "ht": ["--min", "1", "--max", "2", "--model", "small"],
    },
    "quick": {
        "hello": [], "particle": [], "saddle": [],
        "lse": ["-n", "2500", "40000"],
        "llsq": ["-n", "16", "256"],
        "ode": ["-n", "1000", "-s", "1", "10"],
        "det": ["-l", "5"],
        "gmm": ["-d", "2", "-k", "5"],
        "lstm": ["-l", "2", "-c", "64"],
        "kmeans": ["-k", "10", "-n", "1000", "-d", "8"],
        "ba": ["--min", "0", "--max", "0"],
        "ht": ["--min", "1", "--max", "1", "--model", "small"],
    },
}
# GradBench's smallest ba file has p = 31,843 observations; `ba0` (written into the work copy,
# never into GradBench) is ba1's camera, point, weight and feature with p = BA0_P.
BA0_P = 1000
PIP = ["numpy", "scipy", "pydantic", "dataclasses-json", "jax", "torch==2.13.0"]
# Started in the JAX and PyTorch tools' processes before GradBench's run.py, it replaces
# `gradbench.wrap.multiple_runs` with the same loop plus two changes, the same for every tool:
# the first call (JAX's jit compile, PyTorch's warm-up) is reported apart, as `compile`, as the
# vecgrad tool reports its own; and each timed call waits for its result (`block_until_ready`,
# which JAX needs: its calls return before the result exists; a no-op for other values).
LAUNCH = """
import os, runpy, sys, time
import gradbench.wrap as wrap
try:
    from jax import block_until_ready as ready
except ImportError:
    def ready(x):
        return x

def multiple_runs(*, min_runs=lambda x: x["min_runs"], min_seconds=lambda x: x["min_seconds"],
                  pre, post):
    def decorator(function):
        def wrapped(input_raw):
            timings, elapsed = [], 0
            input = pre(input_raw)
            runs, seconds = min_runs(input_raw), min_seconds(input_raw)
            start = time.perf_counter_ns()
            ready(function(input))
            first = time.perf_counter_ns() - start
            while len(timings) < runs or elapsed < seconds:
                start = time.perf_counter_ns()
                output = ready(function(input))
                end = time.perf_counter_ns()
                timings.append({"name": "evaluate", "nanoseconds": end - start})
                elapsed += (end - start) / 1e9
            fastest = min(t["nanoseconds"] for t in timings)
            timings.insert(0, {"name": "compile", "nanoseconds": max(first - fastest, 0)})
            return {"success": True, "output": post(output), "timings": timings}
        return wrap.Wrapped(function=function, wrapped=wrapped)
    return decorator

wrap.multiple_runs = multiple_runs
sys.argv = [sys.argv[1]] + sys.argv[2:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as `python run.py` would: modules by name
runpy.run_path(sys.argv[0], run_name="__main__")
"""


# ---------------------------------------------------------------------------- setup


def export_checkout(src: Path, dest: Path) -> Path:
    """A work tree of GradBench at `dest` (from a work tree or a bare git directory)."""
    if dest.exists():
        return dest
    if (src / "evals").is_dir():
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git"))
        return dest
    git = ["git", "--git-dir", str(src)]
    rows = [line.split(None, 3) for line in subprocess.run(
        git + ["ls-tree", "-r", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.splitlines()]
    blobs = [r for r in rows if r[1] == "blob"]
    check = subprocess.run(git + ["cat-file", "--batch-check"], check=True, text=True,
                           capture_output=True,
                           input="".join(r[2] + "\n" for r in blobs)).stdout.splitlines()
    keep = [r[3] for r, c in zip(blobs, check) if not c.endswith("missing")]
    if len(keep) < len(blobs):
        print(f"note: {len(blobs) - len(keep)} files absent from {src} are skipped",
              file=sys.stderr)
    dest.mkdir(parents=True)
    tar = subprocess.run(git + ["archive", "HEAD", "--", *keep], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def build_manual(gb: Path, evals: list[str]) -> None:
    """Build GradBench's reference C++ tool, which its evals call to validate answers."""
    header = gb / "cpp" / "json.hpp"
    if not header.exists():
        system = Path("/usr/include/nlohmann/json.hpp")  # Debian: nlohmann-json3-dev
        if system.exists():
            shutil.copy(system, header)
        else:
            subprocess.run(["make", "-C", str(gb / "cpp")], check=True)  # downloads it
    targets = [f"bin/{e}" for e in evals if e in TOOL_EVALS["manual"]]
    if targets:
        subprocess.run(["make", "-C", str(gb / "tools" / "manual"), "-j2", *targets],
                       check=True, capture_output=True)


def write_ba0(gb: Path, p: int = BA0_P) -> None:
    data = gb / "evals" / "ba" / "data"
    src = next(data.glob("ba1_*.txt"), None)
    if src is None or next(data.glob("ba0_*.txt"), None):
        return
    lines = src.read_text().splitlines()
    n, m, _ = lines[0].split()
    (data / f"ba0_n{n}_m{m}_p{p}.txt").write_text("\n".join([f"{n} {m} {p}", *lines[1:5]]) + "\n")


def write_lstm_text(gb: Path, chars: int = 8192) -> None:
    """lstm's text, if the checkout lacks it (a partial mirror without its large files): the
    ASCII characters of the checkout's Markdown files, in path order."""
    path = gb / "evals" / "lstm" / "data" / "lstm_full.txt"
    if path.exists():
        return
    text = ""
    for md in sorted(gb.rglob("*.md")):
        text += "".join(c for c in md.read_text(errors="ignore") if " " <= c <= "~" or c == "\n")
        if len(text) >= chars:
            break
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"note: {path.name} is absent; substituted {len(text)} ASCII characters of the "
          "checkout's Markdown files", file=sys.stderr)


def make_venv(venv: Path) -> Path:
    py = venv / "bin" / "python"
    stamp = venv / ".gradbench-installed"
    if not stamp.exists():
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PIP], check=True)
        stamp.write_text(" ".join(PIP))
    return py


# ---------------------------------------------------------------------------- intermediary


@dataclass
class Session:
    """One eval run against one tool: the message log and how it ended."""

    eval: str
    tool: str
    log: list[dict] = field(default_factory=list)
    outcome: str = "success"
    stderr: str = ""


def _pump_stderr(proc: subprocess.Popen, sink: list[str]) -> None:
    sink.extend(proc.stderr)


def run_session(py: Path, gb: Path, eval_name: str, eval_args: list[str], tool: str,
                tool_cmd: list[str], timeout: float, env: dict) -> Session:
    """Forward lines between the eval and the tool (GradBench's intermediary, in Python)."""
    s = Session(eval_name, tool)
    eval_cmd = [str(py), str(gb / "python/gradbench/gradbench/evals" / eval_name / "run.py"),
                *eval_args]
    ev = subprocess.Popen(eval_cmd, cwd=gb, env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tl = subprocess.Popen(tool_cmd, cwd=gb, env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=_pin)  # noqa: PLW1509 (before the pump threads)
    errs: list[str] = []
    for p in (ev, tl):
        threading.Thread(target=_pump_stderr, args=(p, errs), daemon=True).start()
    deadline = time.monotonic() + timeout
    start = time.perf_counter_ns()
    killer = threading.Timer(timeout, lambda: (ev.kill(), tl.kill()))
    killer.start()
    try:
        for line in ev.stdout:
            msg = json.loads(line)
            s.log.append({"elapsed": time.perf_counter_ns() - start, "message": msg})
            if msg.get("kind") == "end":
                break
            tl.stdin.write(line if line.endswith("\n") else line + "\n")
            tl.stdin.flush()
            reply = tl.stdout.readline()
            if not reply:
                s.outcome = "tool exited"
                break
            s.log.append({"elapsed": time.perf_counter_ns() - start,
                          "response": json.loads(reply)})
            ev.stdin.write(reply)
            ev.stdin.flush()
    except (BrokenPipeError, ValueError):
        s.outcome = "broken pipe"
    finally:
        killer.cancel()
        if time.monotonic() >= deadline:
            s.outcome = "timeout"
        for p in (ev, tl):
            for f in (p.stdin,):
                try:
                    f.close()
                except OSError:
                    pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    if ev.returncode not in (0, None) and s.outcome == "success":
        s.outcome = f"eval exited {ev.returncode}"
    s.stderr = "".join(errs)[-4000:]
    return s


def _pin() -> None:
    """Every tool runs on one core (GradBench's JAX tool pins itself to CPU 0 likewise)."""
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass


def tool_command(py: Path, gb: Path, tool: str, here: Path = HERE) -> list[str]:
    tools = gb / "python/gradbench/gradbench/tools"
    if tool == "vecgrad":
        return [str(py), str(here / "vecgrad_tool" / "run.py")]
    if tool == "jax":
        return [str(py), "-c", LAUNCH, str(tools / "jax/run.py")]
    if tool == "pytorch":
        return [str(py), "-c", LAUNCH, str(tools / "pytorch/run.py")]
    if tool == "manual":
        return [str(py), str(gb / "python/gradbench/gradbench/cpp.py"), "manual"]
    raise ValueError(tool)


# ---------------------------------------------------------------------------- results


def results(s: Session) -> list[dict]:
    """One record per evaluate message: function, size, validity and timings (seconds)."""
    by_id: dict[int, dict] = {}
    out: list[dict] = []
    for entry in s.log:
        if "message" in entry:
            m = entry["message"]
            if m["kind"] == "evaluate":
                rec = {"eval": s.eval, "tool": s.tool, "id": m["id"], "function": m["function"],
                       "size": m.get("description", ""), "valid": None, "error": None,
                       "input": m["input"]}
                by_id[m["id"]] = rec
                out.append(rec)
            elif m["kind"] == "analysis" and m["of"] in by_id:
                by_id[m["of"]]["valid"] = m["valid"]
                by_id[m["of"]]["error"] = (m.get("error") or "")[-300:] or None
        elif "response" in entry:
            r = entry["response"]
            rec = by_id.get(r["id"])
            if rec is None:
                continue
            if not r.get("success"):
                rec["valid"] = False
                rec["error"] = (r.get("error") or "failed")[-300:]
            ts = r.get("timings") or []
            runs = [t["nanoseconds"] / 1e9 for t in ts if t["name"] == "evaluate"]
            rec["runs"] = len(runs)
            rec["min"] = min(runs) if runs else None
            rec["median"] = statistics.median(runs) if runs else None
            rec["compile"] = sum(t["nanoseconds"] for t in ts if t["name"] == "compile") / 1e9
    for rec in out:
        if "runs" not in rec:
            rec["valid"] = False
            rec["error"] = s.outcome
    return out


def merge_repeats(recs: list[dict]) -> list[dict]:
    """Across repeated sessions, keep the fastest median of each (eval, tool, function, size)."""
    best: dict[tuple, dict] = {}
    for r in recs:
        key = (r["eval"], r["tool"], r["function"], r["size"])
        b = best.get(key)
        if b is None:
            best[key] = dict(r)
            continue
        b["valid"] = bool(b["valid"]) and bool(r["valid"])
        if r.get("median") is not None and (b.get("median") is None
                                            or r["median"] < b["median"]):
            for k in ("min", "median", "runs"):
                b[k] = r[k]
        if r.get("min") is not None and b.get("min") is not None:
            b["min"] = min(b["min"], r["min"])
        b["compile"] = min(b.get("compile") or 0, r.get("compile") or 0) or b.get("compile")
    return list(best.values())


# ---------------------------------------------------------------------------- the table

PRIMAL = {"hello": "square", "kmeans": "cost", "gmm": "objective", "lstm": "objective",
          "ba": "objective", "ht": "objective"}
GRADIENT = {"hello": "double", "kmeans": "dir", "gmm": "jacobian", "lstm": "jacobian",
            "ba": "jacobian", "ht": "jacobian"}
NESTED = ("rr", "ff", "fr", "rf")  # particle and saddle: four gradient-descent variants
COMPILE_TARGET = 2.0


def fmt(t: float | None) -> str:
    if t is None:
        return "-"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} us"


def rows(recs: list[dict], stat: str = "min") -> list[dict]:
    """One row per (eval, size, gradient function): vecgrad's figures beside the others'
    (`stat`: "min" or "median" of each session's runs, the same for every tool)."""
    idx = {(r["eval"], r["tool"], r["function"], r["size"]): r for r in recs}
    out = []
    for r in recs:
        if r["tool"] != "vecgrad":
            continue
        e, f, size = r["eval"], r["function"], r["size"]
        if f not in NESTED and f != GRADIENT.get(e, "gradient"):
            continue
        prim = idx.get((e, "vecgrad", PRIMAL.get(e, "primal"), size))
        other = {t: idx.get((e, t, f, size)) for t in TOOLS if t != "vecgrad"}
        ref_tool = "jax" if e in TOOL_EVALS["jax"] else (
            "pytorch" if e in TOOL_EVALS["pytorch"] else None)
        ref = other.get(ref_tool) if ref_tool else None
        row = {"eval": e, "size": size if f not in NESTED else f"{f} ({size})", "function": f,
               "valid": {t: (x or {}).get("valid") for t, x in [("vecgrad", r), *other.items()]},
               "obj": (prim or {}).get(stat), "grad": r.get(stat),
               "grad_min": r.get("min"),
               "compile": max((r.get("compile") or 0), ((prim or {}).get("compile") or 0)),
               "jax": (other["jax"] or {}).get(stat), "pytorch": (
                   other["pytorch"] or {}).get(stat),
               "manual": (other["manual"] or {}).get(stat), "ref_tool": ref_tool,
               "error": r.get("error"), "input": r.get("input")}
        refv = ref.get(stat) if ref and ref.get("valid") else None
        row["ratio"] = (row["grad"] / refv) if refv and row["grad"] else None
        misses = []
        if not r.get("valid"):
            misses.append("invalid" if r.get("runs") else "failed")
        if row["ratio"] is not None and row["ratio"] > 1:
            misses.append(f"gradient {row['ratio']:.2g}x {ref_tool}")
        if row["compile"] > COMPILE_TARGET:
            misses.append(f"compile {row['compile']:.1f} s")
        row["misses"] = misses
        row["met"] = "yes" if not misses else "no"
        if ref_tool and refv is None:
            row["met"] += f" ({ref_tool} invalid or failed)" if not misses else ""
        if not ref_tool and not misses:
            row["met"] = "yes (no JAX/PyTorch tool)"
        if e == "hello":  # GradBench's protocol check: one untimed-by-repetition call
            row["ratio"], row["misses"], row["met"] = None, [], "n/a (protocol check)"
        out.append(row)
    return out


def table(rs: list[dict]) -> str:
    def v(x):
        return {True: "yes", False: "NO", None: "-"}[x]
    lines = [("| eval | size | valid (vg/JAX/PT/C++) | vecgrad objective | vecgrad gradient | "
              "grad/obj | compile | JAX gradient | PyTorch gradient | C++ manual | "
              "vecgrad/ref | target met? | why not |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        val = "/".join(v(r["valid"].get(t)) for t in TOOLS)
        go = (f"{r['grad'] / r['obj']:.2g}x" if r["grad"] and r["obj"] else "-")
        ratio = f"{r['ratio']:.2g}x {r['ref_tool']}" if r["ratio"] else "-"
        why = "; ".join(r["misses"] + ([r["why"]] if r.get("why") else []))
        lines.append(f"| {r['eval']} | {r['size']} | {val} | {fmt(r['obj'])} | "
                     f"{fmt(r['grad'])} | {go} | {fmt(r['compile'])} | {fmt(r['jax'])} | "
                     f"{fmt(r['pytorch'])} | {fmt(r['manual'])} | {ratio} | {r['met']} | "
                     f"{' '.join(why.replace('|', '/').split())} |")
    return "\n".join(lines)


def explain_reason(py: Path, env: dict, eval_name: str, function: str, inp: dict) -> str:
    """vg.explain's account of the gradient (what stayed unbatched), in a fresh process."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"eval": eval_name, "function": function, "input": inp}, f)
    try:
        here = Path(env["PYTHONPATH"].split(os.pathsep)[-1]).parent / "gradbench"
        p = subprocess.run([str(py), str(here / "run.py"), "--explain-one", f.name],
                           check=False, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "explain: timed out"
    finally:
        os.unlink(f.name)
    lines = p.stdout.strip().splitlines()
    return lines[-1] if p.returncode == 0 and lines else f"explain failed: {p.stderr[-200:]}"


def explain_one(path: str) -> None:
    sys.path[:0] = [str(HERE), str(HERE.parent)]  # the tool; bench/ (patterns' harness)
    from importlib import import_module

    from patterns.harness import not_batched

    import vecgrad as vg
    job = json.loads(Path(path).read_text())
    mod = import_module(f"vecgrad_tool.{job['eval']}")
    if not hasattr(mod, "explain_args"):
        print("explain: n/a (a gradient-descent driver in Python calling compiled functions; "
              "no single gradient to explain)")
        return
    fun, args, argnums = mod.explain_args(job["function"], job["input"])
    rep = vg.explain(fun, *args, argnums=argnums, budget=0.2)
    hot = rep.hot[0] if rep.hot else None
    shapes = hot.shapes if hot and len(hot.shapes) < 80 else "..."
    top = (f"; hottest: {'backward' if hot.backward else 'forward'} {hot.what} "
           f"{shapes} ({hot.share:.0%})" if hot else "")
    print(f"explain: {not_batched(rep, 300)}{top}; gradient/forward {rep.ratio:.1f}x; "
          f"{rep.eqns.get('traced', '?')} traced ops")


def write_benchmarks(text: str, path: Path = REPO / "BENCHMARKS.md") -> None:
    begin, end = "<!-- gradbench:begin -->", "<!-- gradbench:end -->"
    doc = path.read_text()
    block = f"{begin}\n{text}\n{end}"
    if begin in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        head, sep, rest = doc.partition("\n## ")
        doc = f"{head}\n\n{block}\n\n## {rest}" if sep else f"{doc}\n{block}\n"
    path.write_text(doc)


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gradbench", type=Path, help="a GradBench checkout (work tree or git dir)")
    ap.add_argument("--evals", default=",".join(EVALS))
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--sizes", choices=sorted(SIZES), default="table")
    ap.add_argument("--min-runs", type=int, default=1)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1, help="sessions per eval and tool")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per session")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "vecgrad-gradbench",
                    help="work folder outside the repository (checkout, venv, logs)")
    ap.add_argument("--no-explain", action="store_true")
    ap.add_argument("--write-benchmarks", action="store_true",
                    help="put the table into BENCHMARKS.md (between gradbench markers)")
    ap.add_argument("--stat", choices=["min", "median"], default="min",
                    help="which of each session's run times the table shows (every tool alike)")
    ap.add_argument("--from-logs", action="store_true",
                    help="no sessions: the table from the logs of an earlier run in --work")
    ap.add_argument("--explain-one", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.explain_one:
        explain_one(a.explain_one)
        return 0
    if a.gradbench is None:
        ap.error("--gradbench PATH is required")
    evals, tools = a.evals.split(","), a.tools.split(",")
    a.work.mkdir(parents=True, exist_ok=True)
    gb = export_checkout(a.gradbench.resolve(), a.work / "gradbench")
    build_manual(gb, evals)
    write_ba0(gb)
    write_lstm_text(gb)
    py = make_venv(a.work / "venv")
    # vecgrad and this tool as they are now, so that edits during a long run change nothing
    snap = a.work / "vecgrad-src"
    if not a.from_logs:  # (with --from-logs, explain runs the snapshot that made the logs)
        shutil.rmtree(snap, ignore_errors=True)
        shutil.copytree(REPO / "src", snap / "src", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(HERE, snap / "gradbench", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "bench" / "patterns", snap / "patterns",
                        ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(gb / "python/gradbench"), str(snap / "src")]), PYTHONUNBUFFERED="1",
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    logs = a.work / "logs"
    logs.mkdir(exist_ok=True)
    recs: list[dict] = []
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            check=False, capture_output=True, text=True).stdout.strip()
    cmd = "python bench/gradbench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    t_start = time.time()
    run_info = {"commit": commit, "start": t_start, "cmd": cmd}
    if a.from_logs:  # the logs' run, not this one (an older run without run.json: unknown)
        info = a.work / "run.json"
        run_info = (json.loads(info.read_text()) if info.exists() else
                    {"commit": "unknown", "start": t_start, "end": t_start, "cmd": "unknown"})
    for e in evals:
        args = SIZES[a.sizes][e]
        if e != "hello":
            args = args + ["--min-runs", str(a.min_runs), "--min-seconds", str(a.min_seconds)]
        for rep in range(a.repeat):
            for t in tools:
                if t != "vecgrad" and e not in TOOL_EVALS[t]:
                    continue
                t0 = time.time()
                if a.from_logs:
                    path = logs / f"{e}-{t}-{rep}.jsonl"
                    if path.exists():
                        s = Session(e, t, [json.loads(x) for x in path.read_text().splitlines()])
                        recs += results(s)
                    continue
                s = run_session(py, gb, e, args, t, tool_command(py, gb, t, snap / "gradbench"),
                                a.timeout, env)
                (logs / f"{e}-{t}-{rep}.jsonl").write_text(
                    "".join(json.dumps(x) + "\n" for x in s.log))
                rs = results(s)
                recs += rs
                bad = [r for r in rs if not r["valid"]]
                print(f"{e:9s} {t:8s} {s.outcome:10s} {len(rs) - len(bad)}/{len(rs)} valid "
                      f"({time.time() - t0:.0f} s)", flush=True)
                for r in bad[:2]:
                    print(f"    {r['function']} {r['size']}: {(r['error'] or '')[-200:]}")
                if s.outcome != "success" and s.stderr:
                    print("    " + s.stderr[-600:].replace("\n", "\n    "))
    if not a.from_logs:
        run_info["end"] = time.time()
        (a.work / "run.json").write_text(json.dumps(run_info))
    merged = merge_repeats(recs)
    rs = rows(merged, a.stat)
    done = {r["eval"] for r in rs}
    rs += [{"eval": e, "size": "-", "valid": {}, "obj": None, "grad": None, "compile": 0,
            "jax": None, "pytorch": None, "manual": None, "ratio": None, "ref_tool": None,
            "misses": ["not run by the vecgrad tool (define failed or session broke)"],
            "met": "no"} for e in evals if e not in done and "vecgrad" in tools]
    if not a.no_explain:
        for r in rs:
            if r["misses"] and r["valid"].get("vecgrad"):
                r["why"] = explain_reason(py, env, r["eval"], r["function"], r["input"])
    (a.work / "results.json").write_text(json.dumps(
        [{k: v for k, v in r.items() if k != "input"} for r in merged], indent=1))
    t0, t1 = run_info["start"], run_info.get("end", time.time())
    span = (f"{time.strftime('%Y-%m-%d, %H:%M', time.gmtime(t0))} to "
            f"{time.strftime('%H:%M UTC', time.gmtime(t1))}")
    rebuilt = (f" (table rebuilt from that run's logs: `{cmd}`)" if a.from_logs else "")
    head = (f"## GradBench (issue 13) (commit {run_info['commit']}, {span})\n\n"
            f"`{run_info['cmd']}`{rebuilt}\n\n"
            f"Sizes `{a.sizes}`; min_seconds {a.min_seconds}; {a.repeat} session(s) per eval "
            f"and tool; {(t1 - t0) / 60:.0f} min wall; load average at the end "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores. Times are the {a.stat} of "
            "each session's runs, for every tool alike; JAX and PyTorch are GradBench's own "
            "tools, each timed call waiting for its result (`block_until_ready`); validity is "
            "GradBench's own check against its C++ `manual` tool (vg/JAX/PT/C++).")
    text = head + "\n\n" + table(rs)
    print("\n" + text)
    (a.work / "table.md").write_text(text + "\n")
    if a.write_benchmarks:
        write_benchmarks(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
