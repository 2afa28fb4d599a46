"""Run HIPS autograd's examples against vecgrad, as a user would (see README.md here).

    python bench/autograd_suite/examples.py --autograd PATH [--iters N] [--timeout S] [NAME ...]

Each example runs in a fresh process, from an exported copy of the checkout's examples/
folder, with `autograd` replaced by shim/autograd, matplotlib on the Agg backend and the
training loops shortened (below). It prints one line per example: `ran`, `failed` with the
error class, the message and the first vecgrad frame (or the example's own frame), or
`by design` with the reason it cannot run here (BY_DESIGN, EXPECTED below). With --compare,
each example that ran is run again under the installed real autograd (pip install autograd)
and the numbers both printed (objective values along the optimization, gradients) are
compared; so are a sum and a max of every array the example plots (Axes.plot is wrapped to
print them). NumPy's global random state is seeded (0) in both runs. The outermost calls of
the functions made by `grad`, `value_and_grad` and `elementwise_grad` are timed in both runs:
the median of the calls that are not the first of their gradient function (a first call
includes vecgrad's compilation) is printed, with the first call's time, and
the first call's results (the gradient at the examples' seeded starting point, the same in
both runs) are compared directly: the largest difference relative to the largest entry.

Shortening (the examples' code is not edited): `autograd.misc.optimizers` (sgd, rmsprop,
adam) are called with `num_iters` capped at --iters, and `scipy.optimize.minimize` is called with
`options["maxiter"]` capped at --iters. Loops written in an example itself run in full.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = HERE / "shim"

# Examples that cannot run here, and why (checked by the runner: each must exist).
BY_DESIGN = {
    "convnet.py": "downloads MNIST (no network here)",
    "neural_net.py": "downloads MNIST (no network here)",
    "generative_adversarial_net.py": "downloads MNIST (no network here)",
    "variational_autoencoder.py": "downloads MNIST (no network here)",
    "print_trace.py": "prints autograd's tracer graph (autograd.tracer internals)",
    "dot_graph.py": "draws autograd's tracer graph (autograd.tracer internals)",
    "rkhs.py": ("subclasses autograd's Box and VSpace (a function-valued argument): autograd "
                "internals"),
    "fixed_points.py": ("autograd.misc.fixed_points iterates until a traced distance is "
                        "below tol: a data-dependent loop, and vecgrad has no host-callback "
                        "primitive to run it eagerly"),
}
_RANDOM = ("draws its noise inside the differentiated function from a RandomState it closes "
           "over: vecgrad raises RandomStateError (issue 10 §1) rather than freeze one sample "
           "into the compiled code; the fix is to pass the noise as an argument")
_CONST_INDEX = ("advects the initial smoke, a plain NumPy image, with traced indices "
                "(f[left_ix, top_ix]): NumPy's indexing of a plain array cannot hand the work "
                "to a tracer (JAX fails the same way); the error says to use vnp.take")
# Examples that stop, by design, at a typed vecgrad error of this class (any other outcome,
# including running, is reported as it is).
EXPECTED = {
    "black_box_svi.py": ("RandomStateError", _RANDOM),
    "bayesian_neural_net.py": ("RandomStateError", _RANDOM + " (black_box_svi's objective)"),
    "mixture_variational_inference.py": ("RandomStateError", _RANDOM),
    "natural_gradient_black_box_svi.py": ("RandomStateError", _RANDOM),
    "fluidsim/fluidsim.py": ("TracedIntoNumpyError", _CONST_INDEX),
    "hmm_em.py": ("Timeout", ("EM iterates until the parameters stop changing, which never "
                  "happens: at iteration 146 zero counts make the log-likelihood NaN, exactly "
                  "as under autograd (same values to 1e-15 for the iterations both ran; the "
                  "same NaN gradients from the same parameters)")),
    "sinusoid.py": ("ConcretizationError", ("the Taylor series stops at `if np.abs(currterm) "
                    "< 0.2`, a branch on a traced value (as in JAX); its first part runs")),
}
HELPERS = {"data.py", "data_mnist.py", "__init__.py"}  # modules the examples import

# Run inside the example's process: caps the optimizers' iterations, runs the example as
# __main__ and writes the outcome as JSON.
BOOT = r'''
import json, os, runpy, sys, traceback
import numpy
numpy.random.seed(0)  # the same draws under vecgrad and autograd (--compare)
import matplotlib
matplotlib.use("Agg")
import scipy.optimize as so
cap = int(os.environ["EXAMPLES_MAX_ITERS"])
_minimize = so.minimize
def minimize(*a, **k):
    opts = dict(k.get("options") or {})
    opts["maxiter"] = min(opts.get("maxiter", cap), cap)
    k["options"] = opts
    return _minimize(*a, **k)
so.minimize = minimize
try:  # the optimizers' iterations, capped the same way under the shim and real autograd
    import autograd.misc.optimizers as opt
    def _capped(f):
        def run(*a, **k):
            k["num_iters"] = min(k.get("num_iters", cap), cap)
            return f(*a, **k)
        return run
    for name in ("sgd", "rmsprop", "adam"):
        setattr(opt, name, _capped(getattr(opt, name)))
except ImportError:
    pass
import time
import autograd
_times, _depth, _first, _seen = [], [0], [], set()
def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for c in x for y in _leaves(c)]
    if isinstance(x, dict):
        return [y for k in sorted(x, key=repr) for y in _leaves(x[k])]
    try:
        return [numpy.asarray(x, float).ravel().tolist()]
    except Exception:
        return []
def _timed(op):  # the outermost gradient calls are timed (the first includes compiling)
    def make(fun, *a, **k):
        g = op(fun, *a, **k)
        def run(*x, **kw):
            _depth[0] += 1
            t = time.perf_counter()
            try:
                out = g(*x, **kw)
            finally:
                _depth[0] -= 1
                if not _depth[0]:
                    _times.append((time.perf_counter() - t, run in _seen))
                    _seen.add(run)
            if not _depth[0] and len(_times) == 1:  # the first gradient, at the same point
                _first.extend(_leaves(out))           # in both runs: compared directly
            return out
        return run
    return make
for name in ("grad", "value_and_grad", "elementwise_grad"):
    setattr(autograd, name, _timed(getattr(autograd, name)))
import matplotlib.axes
_plot = matplotlib.axes.Axes.plot
def plot(self, *a, **k):  # what is plotted (predictions, derivatives) is compared too
    for x in a:
        try:
            arr = numpy.asarray(x, float)
        except Exception:
            continue
        if arr.size > 1:
            print(f"[plotted] {arr.sum():.10e} {numpy.abs(arr).max():.10e}")
    return _plot(self, *a, **k)
matplotlib.axes.Axes.plot = plot
path, out = sys.argv[1], sys.argv[2]
sys.argv = [path]
res = {"status": "ran"}
try:
    runpy.run_path(path, run_name="__main__")
except BaseException as e:
    tb = traceback.extract_tb(e.__traceback__)
    vg = [f for f in tb if "/vecgrad/" in f.filename]
    own = [f for f in tb if f.filename.startswith(os.path.dirname(path))]
    f = (vg or own or tb)[0]
    res = {"status": "failed", "error": type(e).__name__, "message": str(e).splitlines()[0]
           if str(e) else "", "frame": f"{f.filename}:{f.lineno} in {f.name}",
           "raised": f"{tb[-1].filename}:{tb[-1].lineno}" if vg else "",
           "example_frame": f"{os.path.basename(own[-1].filename)}:{own[-1].lineno}"
           if own else ""}
if _times:  # the median of the calls that are not the first of their gradient function
    rest = sorted(t for t, again in _times if again)
    res["grad_calls"] = {"n": len(_times), "first": _times[0][0],
                         "median": rest[len(rest) // 2] if rest else None, "first_out": _first}
json.dump(res, open(out, "w"))
'''


def export_examples(src: Path, dest: Path) -> Path:
    """Copy the checkout's examples/ folder (a work tree, or a git directory without one)."""
    if (src / "examples").is_dir():
        shutil.copytree(src / "examples", dest / "examples")
    else:
        tar = subprocess.run(["git", "--git-dir", str(src), "archive", "HEAD", "examples"],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "examples"


def run_one(ex: Path, iters: int, timeout: float, real: bool = False) -> dict:
    """Run one example (under real autograd when `real`); its outcome and stdout."""
    out = ex.with_suffix(".real.json" if real else ".result.json")
    path = [str(ex.parent)] if real else [str(SHIM), str(ex.parent)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path),
               MPLBACKEND="Agg", EXAMPLES_MAX_ITERS=str(iters), PYTHONWARNINGS="ignore")
    boot = ex.parent / "_vecgrad_boot.py"
    boot.write_text(BOOT)
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, str(boot), str(ex), str(out)], cwd=ex.parent,
                           env=env, timeout=timeout, capture_output=True, text=True,
                           check=False)
    except subprocess.TimeoutExpired:
        p = None
    if p is None:
        res = {"status": "failed", "error": "Timeout", "message": f"over {timeout:.0f} s"}
    elif not out.exists():
        return {"status": "failed", "error": f"exit {p.returncode}",
                "message": (p.stderr.strip().splitlines() or [""])[-1], "stdout": p.stdout}
    else:
        res = json.loads(out.read_text())
    expected = EXPECTED.get(ex.parent.name + "/" + ex.name, EXPECTED.get(ex.name))
    if not real and expected and res.get("error") == expected[0]:
        res.update(status="by design", message=f"{expected[0]}: {expected[1]}")
    res["stdout"] = p.stdout if p else ""
    res["seconds"] = time.perf_counter() - t0
    return res


NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def compare(ours: str, theirs: str, rtol: float, atol: float = 1e-9) -> str:
    """'same' if both printed the same numbers (to rtol, or atol for numbers that are zero
    but for rounding, like a gradient at a stationary point), else where they first differ."""
    a, b = NUM.findall(ours), NUM.findall(theirs)
    if not a and not b:
        return "nothing"
    for k, (x, y) in enumerate(zip(a, b)):
        fx, fy = float(x), float(y)
        if not (fx == fy or abs(fx - fy) <= max(rtol * max(abs(fx), abs(fy)), atol)):
            line = next(ln for ln in ours.splitlines() if x in ln)
            return f"number {k} differs: {x} vs autograd's {y} (line: {line.strip()[:60]})"
    if len(a) != len(b):
        return f"printed {len(a)} numbers, autograd {len(b)}"
    return f"same ({len(a)} numbers)"


def _split(out: str) -> tuple[str, str]:
    """(what the example printed, the plotted-data lines)."""
    lines = out.splitlines()
    return ("\n".join(ln for ln in lines if not ln.startswith("[plotted]")),
            "\n".join(ln for ln in lines if ln.startswith("[plotted]")))


def first_grad_error(ours: list, theirs: list) -> str:
    """The largest difference between the two runs' first gradients (computed at the same
    point: the examples' seeded initial parameters), relative to the largest entry."""
    if len(ours) != len(theirs) or any(len(a) != len(b) for a, b in zip(ours, theirs)):
        return "different structure"
    worst = 0.0
    for a, b in zip(ours, theirs):
        scale = max((abs(v) for v in b), default=0.0) or 1.0
        worst = max([worst] + [abs(x - y) / scale for x, y in zip(a, b)])
    return f"max relative difference {worst:.1e} over {sum(map(len, ours))} numbers"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--autograd", type=Path, required=True,
                    help="a checkout of github.com/HIPS/autograd (work tree or git directory)")
    ap.add_argument("--iters", type=int, default=5, help="cap on optimizer iterations")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per example")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--compare", action="store_true",
                    help="also run each example under the installed real autograd and compare "
                    "the numbers both print (objective values along the optimization)")
    ap.add_argument("--rtol", type=float, default=1e-4, help="tolerance of --compare")
    ap.add_argument("names", nargs="*", help="examples to run (default: all)")
    a = ap.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = export_examples(a.autograd, Path(tmp))
        found = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                       if p.name not in HELPERS)
        missing = set(BY_DESIGN) - set(found)
        if missing:
            raise SystemExit(f"BY_DESIGN names examples that do not exist: {sorted(missing)}")
        for name in found:
            if a.names and name not in a.names and Path(name).stem not in a.names:
                continue
            if name in BY_DESIGN:
                r = {"status": "by design", "message": BY_DESIGN[name]}
            else:
                r = run_one(root / name, a.iters, a.timeout)
            results[name] = r
            line = f"{name:38s} {r['status']:9s}"
            if r["status"] == "failed":
                line += f" {r['error']}: {r['message'][:100]}"
                if r.get("frame"):
                    line += f"\n{'':48s}at {r['frame']} (example: {r.get('example_frame')})"
                    if r.get("raised"):
                        line += f"\n{'':48s}raised at {r['raised']}"
            elif r["status"] == "by design":
                line += f" {r['message']}"
            if a.compare and r["status"] == "ran":
                theirs = run_one(root / name, a.iters, a.timeout, real=True)
                if theirs["status"] == "ran":
                    r["compare"] = "printed: " + compare(*(_split(o)[0] for o in (
                        r["stdout"], theirs["stdout"])), a.rtol) + "; plotted: " + compare(
                        *(_split(o)[1] for o in (r["stdout"], theirs["stdout"])), a.rtol)
                else:
                    r["compare"] = f"autograd: {theirs.get('error')}"
                line += f" vs autograd: {r['compare']}"
                if "seconds" in theirs:
                    line += f"\n{'':48s}wall {r['seconds']:.1f} s (autograd " \
                        f"{theirs['seconds']:.1f} s)"
                gc, gt = r.get("grad_calls"), theirs.get("grad_calls")
                if gc and gt:
                    r["first_grad"] = first_grad_error(gc["first_out"], gt["first_out"])
                    line += f"\n{'':48s}first gradient call: {r['first_grad']}"
                if gc and gt and gc["median"] and gt["median"]:
                    r["grad_ms"] = {"vecgrad": gc["median"] * 1e3,
                                    "autograd": gt["median"] * 1e3, "first": gc["first"]}
                    line += f"; gradient call median {gc['median'] * 1e3:.2f} ms vs " \
                        f"autograd {gt['median'] * 1e3:.2f} ms (ratio " \
                        f"{gc['median'] / gt['median']:.2f}; first call {gc['first']:.2f} s)"
            r.get("grad_calls", {}).pop("first_out", None)
            print(line, flush=True)
    counts = {s: sum(r["status"] == s for r in results.values())
              for s in ("ran", "failed", "by design")}
    print(f"\n{counts['ran']} ran, {counts['failed']} failed, {counts['by design']} by design "
          f"(of {len(results)})")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
