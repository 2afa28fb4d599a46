"""Differential fuzzing of natural loop programs (no silent wrong answers): random programs
in the styles users write (tests/fuzz_loops.py: sliding windows, stencils and 2-D patches,
buffers written in place and through views, edge lists as tuples / two int arrays / an (E, 2)
array and reads after writes along them, comprehensions and lists, `map` and user functions
taking kernels, Python-int branches, mixed accumulators, recurrences (long ones rolled),
int / bool / float32 arithmetic, NumPy calls in loops, and 'loopmix': one loop mixing random
writes and reads at affine, modular and traced positions), each wrapped in one transform
(`vg.jit`, `vg.jit(static_argnums=...)`, `vg.value_and_grad`, `has_aux`, `vg.vmap`), are run

(a) by NumPy (the same source on NumPy arrays: the oracle) and by vecgrad: equal values,
    dtypes and shapes;
(b) `vg.grad` of a random weighting of the float64 outputs equals float64 central
    differences of the NumPy program in random directions;
(c) the batched graph computes what the unbatched one does (values and VJPs);
(d) the compiled function called again on new values of the same signature (new data, edge
    lists, positions and Python numbers) still equals NumPy, and its gradient a fresh one's.

Or vecgrad raises a typed `VecgradError` naming the program's own line ('<fuzz>:N'). Any
other exception, an error that names no line, or a different number is a bug.

CI runs VECGRAD_FUZZ_LOOPS seeded programs (default 80: seconds). Thousands, locally
(every distinct failure, minimized, with its seed; per-style counts):

    VECGRAD_FUZZ_LOOPS=3000 .venv/bin/python -m pytest -q tests/test_fuzz_loops.py
    nice .venv/bin/python tests/test_fuzz_loops.py 5000 [start] [style]
"""
from __future__ import annotations

import os
import re
import sys
import warnings
from collections import Counter

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("VECGRAD_TYPECHECK", "1")  # (run as a script: stages kept, as in tests)
import test_batch
from fuzz_loops import ARGS, FLOAT_ARGS, Program, draw, load, make_inputs
from fuzz_programs import shrink
from test_batch import assert_same_function, entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import VecgradError

STATIC = (ARGS.index("k"),)
NDIFF = len(FLOAT_ARGS)


class Refused(Exception):
    """vecgrad raised a typed error that names the program's line: an honest refusal."""


def _args(p: Program) -> list:
    return [p.inputs[n] for n in ARGS]


def _numpy(src: str, args: list):
    f = load(src, np)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for a in args:
        if isinstance(a, np.ndarray):
            a.setflags(write=False)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


def _batch_of(p: Program) -> np.ndarray:
    x = p.inputs["x"]
    return np.stack([x, np.cos(x) * 1.3, x[::-1] * 0.7])


def vmap_spec(p: Program) -> tuple | None:
    """(x's mapped axis, v's or None, out_axes) of a vmap transform ('vmap' maps x's axis 0;
    'vmap:XA:VA:OA' x's axis XA, v's VA ('-': v not mapped), outputs at OA); else None."""
    if p.transform in ("vmap", "jgv"):  # (jgv: the gradient is vg.jit(vg.grad(...)))
        return 0, None, 0
    if not p.transform.startswith("vmap:"):
        return None
    xa, va, oa = p.transform[5:].split(":")
    return int(xa), None if va == "-" else int(va), int(oa)


def _mapped_args(p: Program, spec: tuple) -> list:
    """The arguments under vmap: a batch of x's stacked at its axis (and of v's)."""
    xa, va, _ = spec
    args = _args(p)
    args[0] = np.moveaxis(_batch_of(p), 0, xa)
    if va is not None:
        v = p.inputs["v"]
        args[1] = np.moveaxis(np.stack([v, np.sin(v), v[::-1] * 0.5]), 0, va)
    return args


def _vmapped(f, spec: tuple, xp, run=None):
    """vg.vmap of f (xp: vecgrad.numpy), or NumPy's loop over the instances stacked at
    out_axes (run(f, args): how one instance runs)."""
    xa, va, oa = spec
    if xp is vnp:
        return vg.vmap(f, in_axes=(xa, va) + (None,) * (len(ARGS) - 2), out_axes=oa)

    def fv(X, V, *rest):
        Xs = np.moveaxis(X, xa, 0)
        Vs = [V] * len(Xs) if va is None else np.moveaxis(V, va, 0)
        outs = [(run or (lambda f, a: f(*a)))(f, [xb, vb, *rest]) for xb, vb in zip(Xs, Vs)]
        return tuple(np.stack([np.asarray(o[i]) for o in outs], axis=oa)
                     for i in range(len(outs[0])))
    return fv


TREES = {  # a pytree transform's packing of (x, v, W): the params a user passes as one
    "dict": (lambda x, v, W: {"x": x, "v": v, "W": W}, lambda P: (P["x"], P["v"], P["W"])),
    "tuple": (lambda x, v, W: (x, v, W), lambda P: tuple(P)),
    "nested": (lambda x, v, W: {"layer": [x, {"bias": v}], "W": (W,)},
               lambda P: (P["layer"][0], P["layer"][1]["bias"], P["W"][0])),
}


def _treed(p: Program, f):
    """For a 'tree:KIND' transform: g(P, *rest) with (x, v, W) packed into the pytree P,
    returning the outputs as a dict (so a pytree comes out too); else None."""
    if not p.transform.startswith("tree:"):
        return None
    _, unpack = TREES[p.transform[5:]]

    def g(P, *rest):
        return {f"out{i}": o for i, o in enumerate(f(*unpack(P), *rest))}
    return g


def _untree(out: dict) -> tuple:
    return tuple(out[f"out{i}"] for i in range(len(out)))


def eager(p: Program) -> tuple:
    """NumPy's result: the program's outputs (for vmap: each stacked over the batch)."""
    spec = vmap_spec(p)
    if spec is None:
        return tuple(o if type(o) in (float, int, bool) else np.asarray(o)
                     for o in _numpy(p.src, _args(p)))
    try:
        return _vmapped(None, spec, np, run=lambda f, a: _numpy(p.src, a))(
            *_mapped_args(p, spec))
    except ValueError as e:  # (instances of other shapes: a data-dependent mask)
        raise Skip(str(e)) from None


class Skip(Exception):
    """NumPy itself has no result to compare with (e.g. vmap's instances differ in shape)."""


def _call(fn, *a):
    """Runs vecgrad; a typed error naming the program's line becomes Refused."""
    try:
        return fn(*a)
    except VecgradError as e:
        if "<fuzz>:" in str(e):
            raise Refused(str(e).splitlines()[0][:100]) from None
        raise AssertionError(f"{type(e).__name__} names no line of the program: "
                             f"{str(e).splitlines()[0][:120]}") from None


def _compiled(p: Program):
    """The program under its transform, as a function of the arguments (vg.vmap, or vg.jit;
    a pytree transform packs (x, v, W) and unpacks the dict of outputs)."""
    f = load(p.src, vnp)
    spec = vmap_spec(p)
    if spec is not None:
        fv = _vmapped(f, spec, vnp)
        return vg.jit(fv) if p.transform == "jgv" else fv
    g = _treed(p, f)
    if g is not None:
        pack = TREES[p.transform[5:]][0]
        jg = vg.jit(g)
        return lambda x, v, W, *rest: _untree(jg(pack(x, v, W), *rest))
    return vg.jit(f, static_argnums=STATIC) if p.transform in ("static", "sgrad") else \
        vg.jit(f)


def traced(p: Program) -> tuple:
    return _call(_compiled(p), *_primals(p))


def _tol(p: Program, dtype) -> float:
    if dtype == np.float16:  # (a loop's sum in float16 batched as one reduction: reassociated)
        return 3e-2
    return 1e-4 if dtype == np.float32 or re.search(r"float32|\bs\[", p.src) else 1e-8


def assert_outputs(p: Program, got, want) -> None:
    assert isinstance(got, tuple) and len(got) == len(want), f"{type(got)} of {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if type(w) in (float, int, bool):  # a Python scalar the program returned untouched
            assert type(g) is type(w) or isinstance(g, (np.ndarray, np.generic)), \
                f"output {i}: {type(g).__name__} for a {type(w).__name__}"
        else:
            assert isinstance(g, (np.ndarray, np.generic)), f"output {i}: {type(g).__name__}"
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), \
            f"output {i}: {g.shape} {g.dtype} != NumPy's {w.shape} {w.dtype}"
        tol = _tol(p, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"output {i}")


def check_jit(p: Program) -> str:
    """(a) values, dtypes and shapes."""
    want = eager(p)
    args = _args(p)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = traced(p)
    for a, b, n in zip(args, before, ARGS):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f"vecgrad changed argument {n}")
    assert_outputs(p, got, want)
    return "ok"


def _weights(p: Program):
    out = eager(p)
    keep = [i for i, o in enumerate(out) if np.asarray(o).dtype == np.float64]
    return keep, [np.random.default_rng(i + 3).standard_normal(np.shape(out[i])) for i in keep]


def _primals(p: Program) -> list:
    """Every argument of the loss: x (batched under vmap), v, W, then the others (passed as
    arguments, so integer arrays are traced indices and Python numbers weak)."""
    spec = vmap_spec(p)
    return _args(p) if spec is None else _mapped_args(p, spec)


def _loss(p: Program, xp, keep, ws):
    """sum_i <out_i, w_i> over the float64 outputs, a function of every argument."""
    f = load(p.src, xp)
    spec = vmap_spec(p)
    fv = f if spec is None else _vmapped(f, spec, xp)

    def loss(*args, aux=False):
        out = fv(*args)
        val = sum((xp.sum(out[i] * w) for i, w in zip(keep, ws)), 0.0)
        return (val, out) if aux else val
    return loss


NUMS = tuple(range(NDIFF))


def check_grad(p: Program) -> str:
    """(b) the gradient wrt (x, v, W) against central differences."""
    keep, ws = _weights(p)
    if not keep or re.search(r"(?<!\bs)\.astype\(np\.float16\)", p.src):
        return "skip"  # (differences through a cast of x, v or W to float16 are steps)
    prim = _primals(p)
    lv, ln = _loss(p, vnp, keep, ws), _loss(p, np, keep, ws)
    if p.transform == "vag":
        val, g = _call(vg.value_and_grad(lv, argnums=NUMS), *prim)
        tol = _tol(p, np.float64)
        np.testing.assert_allclose(val, ln(*prim), rtol=tol, atol=tol, err_msg="value")
    elif p.transform.startswith("tree:"):
        g = _tree_grad(p, lv, ln, prim)
    elif p.transform == "aux":
        g, aux = _call(vg.grad(lambda *a: lv(*a, aux=True), argnums=NUMS, has_aux=True),
                       *prim)
        assert_outputs(p, tuple(aux), eager(p))
    elif p.transform in ("jgv", "sgrad"):  # (k static: a Python int of the loss)
        g = _call(vg.jit(vg.grad(lv, argnums=NUMS),
                         static_argnums=STATIC if p.transform == "sgrad" else ()), *prim)
    else:
        g = _call(vg.grad(lv, argnums=NUMS), *prim)
    r = np.random.default_rng(11)
    rest = prim[NDIFF:]
    # (through a float32 cast, differences need a larger step and tolerance)
    steps = [(1e-6, 1e-5), (1e-4, 1e-3), (1e-7, 1e-4)] + (
        [(1e-3, 3e-3), (1e-2, 1e-2)] if _tol(p, np.float64) > 1e-6 else [])
    with np.errstate(all="ignore"):
        for _ in range(2):
            d = [r.standard_normal(np.shape(a)) for a in prim[:NDIFF]]
            an = sum(float(np.sum(gi * di)) for gi, di in zip(g, d))
            fds = []
            for eps, tol in steps:
                fd = (ln(*[a + eps * di for a, di in zip(prim, d)], *rest)
                      - ln(*[a - eps * di for a, di in zip(prim, d)], *rest)) / (2 * eps)
                fds.append(float(fd))
                if abs(an - fd) <= tol * (1 + abs(fd)):
                    break
            else:
                if all(np.isnan(fds)):  # (NumPy's own loss is not finite there, e.g. exp
                    raise Skip  # overflowing on vmap's other instances, or the nanmean of
                    # an all-NaN row: no derivative to compare, whatever vecgrad's is)
                raise AssertionError(f"gradient {an} != central differences {fds}")
    return "ok"


def _skeleton(t):
    if isinstance(t, dict):
        return {k: _skeleton(v) for k, v in t.items()}
    if isinstance(t, (list, tuple)):
        return type(t)(_skeleton(v) for v in t)
    return np.shape(t)


def _tree_grad(p: Program, lv, ln, prim: list) -> tuple:
    """value_and_grad with has_aux of the loss of the params pytree P = pack(x, v, W): the
    value, the aux outputs and the gradient's structure checked; the gradient unpacked."""
    pack, unpack = TREES[p.transform[5:]]
    P = pack(*prim[:NDIFF])
    (val, aux), gt = _call(vg.value_and_grad(
        lambda P, *rest: lv(*unpack(P), *rest, aux=True), has_aux=True), P, *prim[NDIFF:])
    assert _skeleton(gt) == _skeleton(P), f"gradient {_skeleton(gt)} of params {_skeleton(P)}"
    tol = _tol(p, np.float64)
    np.testing.assert_allclose(val, ln(*prim), rtol=tol, atol=tol, err_msg="value")
    assert_outputs(p, tuple(aux), eager(p))
    return unpack(gt)


def check_batched(p: Program) -> str:
    """(c) batched graph == unbatched graph (values and VJPs)."""
    if vmap_spec(p) is not None:
        return "skip"  # (vmap's graph is batched by interpretation, not by the pass)
    keep, ws = _weights(p)
    if not keep:
        return "skip"
    e, leaves = _call(entry, _loss(p, vnp, keep, ws), tuple(_primals(p)), NUMS)
    # (float32 values summed in another order by the batched graph round differently)
    low = re.search(r"float32|\bs\[|\bs\b", p.src) is not None
    saved = test_batch.RTOL, test_batch.ATOL
    test_batch.RTOL, test_batch.ATOL = (1e-5, 1e-6) if low else saved
    try:
        assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    finally:
        test_batch.RTOL, test_batch.ATOL = saved
    return "ok"


def _all_outputs(src: str) -> str:
    """The program returning every block's value (NumPy raises in a block whose value is
    not returned; compiled code does not run dead code, as JAX's does not)."""
    body = src.split("def f(", 1)[1]
    names = list(dict.fromkeys(re.findall(r"^    ([A-Za-z_]\w*) = ", body, re.MULTILINE)))
    return re.sub(r"^    return \(.*\)$", f"    return ({', '.join(names)},)", src,
                  flags=re.MULTILINE)


def _check_bounds(q: Program) -> None:
    """Called on an edge list with one position out of bounds (below -n or at n and above),
    the program (every block's value returned) raises IndexError where NumPy does."""
    n = len(q.inputs["v"])
    bad = dict(q.inputs)
    jx = bad["jx"].copy()
    if not len(jx) or vmap_spec(q) is not None:
        return
    jx[len(jx) // 2] = [-n - 1, n, -2 * n - 3, 2 * n + 1][len(q.src) % 4]
    bad.update(jx=jx, E2=np.stack([bad["ix"], jx], axis=1),
               edges=[(int(a), int(b)) for a, b in zip(bad["ix"], jx)])
    src = _all_outputs(q.src)
    try:
        _numpy(src, _args(Program(q.style, q.transform, src, bad)))
    except IndexError:
        jf = vg.jit(load(src, vnp))
        _call(jf, *_args(q))
        try:
            _call(jf, *[bad[a] for a in ARGS])
        except IndexError:
            return
        raise AssertionError("no IndexError for a position out of bounds") from None
    except Exception:  # noqa: BLE001, S110 - NumPy rejects it otherwise
        pass


def check_recall(p: Program) -> str:
    """(d) a compiled function called again on new values of the same signature (new data,
    new edge lists and positions, a new Python number) equals NumPy, and so does its
    gradient a fresh compile's; with a position out of bounds it raises IndexError where
    NumPy does."""
    q = Program(p.style, p.transform, p.src,
                make_inputs(np.random.default_rng(len(p.src)), like=p.inputs))
    try:
        want = eager(q)
    except Exception:  # noqa: BLE001 - NumPy rejects the new values (e.g. an index range)
        return "skip"
    jf = _compiled(p)
    _call(jf, *_primals(p))
    assert_outputs(q, _call(jf, *_primals(q)), want)
    _check_bounds(q)
    keep, ws = _weights(p)
    kq, wq = _weights(q)
    if not keep or kq != keep or [w.shape for w in wq] != [w.shape for w in ws]:
        return "ok"  # (outputs whose shapes follow Python values, e.g. np.unique of edges)
    g = vg.grad(_loss(p, vnp, keep, ws), argnums=NUMS)
    _call(g, *_primals(p))
    fresh = vg.grad(_loss(q, vnp, keep, ws), argnums=NUMS)
    for a, b in zip(_call(g, *_primals(q)), _call(fresh, *_primals(q))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg="second call's gradient")
    return "ok"


def _installed(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None


BACKENDS = [b for b in ("jax", "torch") if _installed(b)]


def check_backends(p: Program) -> str:
    """(e) on each installed engine (jax, torch) the compiled program and its gradient equal
    NumPy's backend's (values and shapes; dtypes up to the engine's own, e.g. jax's int32)."""
    if not BACKENDS or p.transform not in ("jit", "static"):
        return "skip"
    want = _call(_compiled(p), *_primals(p))
    keep, ws = _weights(p)
    gw = _call(vg.grad(_loss(p, vnp, keep, ws), argnums=NUMS), *_primals(p)) if keep else ()
    f = load(p.src, vnp)
    for b in BACKENDS:
        got = _call(vg.jit(f, backend=b, static_argnums=STATIC), *_args(p))
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype.kind == w.dtype.kind, \
                f"{b} output {i}: {g.shape} {g.dtype} != {w.shape} {w.dtype}"
            tol = 1e-4 if w.dtype == np.float32 else 1e-7
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{b} output {i}")
        if keep:
            gb = _call(vg.grad(_loss(p, vnp, keep, ws), argnums=NUMS, backend=b), *_primals(p))
            for a, c in zip(gb, gw):
                np.testing.assert_allclose(np.asarray(a), c, rtol=1e-6, atol=1e-6,
                                           err_msg=f"{b} gradient")
    return "ok"


CHECKS = {"jit": check_jit, "grad": check_grad, "batched": check_batched,
          "recall": check_recall}
if os.environ.get("VECGRAD_FUZZ_BACKENDS"):  # (engines compile slowly: asked for)
    CHECKS["backends"] = check_backends


def run_one(check: str, p: Program) -> tuple[str | None, str]:
    """(signature of the failure or None, status: ok / skip / refused / fail)."""
    try:
        return None, CHECKS[check](p)
    except Skip:
        return None, "skip"
    except Refused as e:
        REFUSALS[re.sub(r"<fuzz>:\d+", "<fuzz>:N", str(e))[:90]] += 1
        return None, "refused"
    except AssertionError as e:
        if _inside_vecgrad(e):  # an internal assertion: a crash, not a check that failed
            return _crash(check, e), "fail"
        first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
        first = re.sub(r"[-\d.e]+", "#", first.strip())[:60]
        return f"{check}: wrong {first}", "fail"
    except Exception as e:  # noqa: BLE001 - a bare exception from vecgrad is a bug too
        return _crash(check, e), "fail"


def _last_frame(e: BaseException):
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _inside_vecgrad(e: BaseException) -> bool:
    return f"{os.sep}vecgrad{os.sep}" in _last_frame(e).tb_frame.f_code.co_filename


def _crash(check: str, e: BaseException) -> str:
    tb = _last_frame(e)
    where = f"{tb.tb_frame.f_code.co_filename.split('/')[-1]}:{tb.tb_lineno}"
    return f"{check}: crash {type(e).__name__} at {where}"


REFUSALS: Counter = Counter()  # the typed errors seen, by message (main prints them)
SEEDS = int(os.environ.get("VECGRAD_FUZZ_LOOPS", "80"))


def seeded_failures(check: str, seeds: int, gen: type | None = None) -> list[str]:
    """The failures of `check` on programs 0..seeds-1 of `gen` (fuzz_loops.Gen by default):
    each test module of a generator asserts there are none."""
    fails = []
    for seed in range(seeds):
        p = draw(seed, gen=gen) if gen else draw(seed)
        if p is None:
            continue
        sig, _ = run_one(check, p)
        if sig is not None:
            fails.append(f"seed {seed} ({p.style}, {p.transform}): {sig}\n{p.src}")
    return fails


def assert_styles_drawn(gen: type, styles, tries: int, least: int) -> None:
    """Each of `styles` is the first block of at least `least` of `tries` programs (a style
    that always fails to draw would be silently missing from the fuzzing), and every
    transform of `gen` is drawn."""
    for style in styles:
        got = [draw(seed, style, gen) for seed in range(tries)]
        assert sum(p is not None and p.style.startswith(style) for p in got) >= least, style
    drawn = {p.transform.split(":")[0] for s in range(120) if (p := draw(s, gen=gen))}
    assert drawn == {t.rstrip(":") for t in gen.TRANSFORMS}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_fuzz_loops_seeded(check):
    """SEEDS seeded programs per check: none may fail."""
    fails = seeded_failures(check, SEEDS)
    assert not fails, f"{len(fails)} failures; first:\n" + fails[0]


def test_every_style_is_drawn():
    from fuzz_loops import Gen
    assert_styles_drawn(Gen, Gen.STYLES, 30, 20)


# ---------------------------------------------------------------- local: thousands of seeds


def minimize(check: str, p: Program, sig: str) -> str:
    """Delete body statements (with their blocks) while the failure keeps its signature."""
    def keeps_failing(src: str) -> bool:
        cand = Program(p.style, p.transform, src, p.inputs)
        eager(cand)
        return run_one(check, cand)[0] == sig

    lines = p.src.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def f("))
    return shrink(p.src, keeps_failing, start + 1)


def main(n: int, start: int = 0, style: str | None = None, gen=None) -> None:
    """Runs programs start..start+n of `gen` (fuzz_calls.CallGen for 'calls' or one of its
    styles, fuzz_structure.StructGen for 'structure', fuzz_semantics.SemGen for 'semantics',
    or one of theirs) and prints per-style counts and every distinct failure, minimized."""
    from fuzz_calls import CallGen
    from fuzz_corners import CornerGen
    from fuzz_semantics import SemGen
    from fuzz_structure import StructGen
    if gen is None:
        gen = next((g for name, g in (("calls", CallGen), ("structure", StructGen),
                                      ("semantics", SemGen), ("corners", CornerGen))
                    if style == name or style in g.NEW), None)
    style = None if style in ("calls", "structure", "semantics", "corners") else style
    found: dict[str, tuple] = {}
    counts: dict[str, Counter] = {c: Counter() for c in CHECKS}
    styles, transforms = Counter(), Counter()
    for seed in range(start, start + n):
        p = draw(seed, style, gen) if gen else draw(seed, style)
        if p is None:
            continue
        for st in p.style.split("+"):
            styles[st] += 1
        transforms[p.transform] += 1
        for check in CHECKS:
            sig, status = run_one(check, p)
            counts[check][status] += 1
            if sig:
                sig = f"{sig} [{p.transform}]"
                if sig not in found:
                    print(f"new failure at seed {seed} ({p.style}): {sig}", flush=True)
                if sig not in found or len(p.src) < len(found[sig][1].src):
                    found[sig] = (seed, p)
        if (seed - start) % 200 == 199:
            print(f"... {seed - start + 1} programs, {len(found)} distinct failures", flush=True)
    print("styles (blocks):", dict(styles))
    print("transforms:", dict(transforms))
    for c, k in counts.items():
        print(c, dict(k))
    for msg, cnt in REFUSALS.most_common(25):
        print(f"refused {cnt}x: {msg}")
    for sig, (seed, p) in sorted(found.items()):
        check = sig.split(":")[0]
        print(f"=== {sig}  (seed {seed}; {p.style}; x{p.inputs['x'].shape})")
        print(minimize(check, p, sig.rsplit(" [", 1)[0]).split("def f(", 1)[-1])


if __name__ == "__main__":
    vg.config(keep_stages=True)  # (as tests/conftest.py: the batched check reads the stages)
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500,
         int(sys.argv[2]) if len(sys.argv) > 2 else 0,
         sys.argv[3] if len(sys.argv) > 3 else None)
