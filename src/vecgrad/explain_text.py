"""An `explain` report: its records and their text form (explain.py computes them)."""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field

from .ir import Src
from .pipeline import timing_keys
from .timing import Stats, fmt_time


@dataclass
class Hot:
    """One operation of the compiled gradient and its measured time."""

    seconds: float
    share: float
    what: str
    shapes: str
    src: Src | None
    backward: bool


@dataclass
class Found:
    """Batched (or unbatchable) work at one source line."""

    src: Src
    count: int
    became: list[str]
    reason: str = ""
    kind: str = "batched"  # or "sequential" (a recurrence left unrolled), "unbatched" (no
    # batching rule), "recurrence" (rolled into a loop or a scan), "repeated" (many
    # operations of one kind left at the line in the compiled gradient)
    what: list[str] = field(default_factory=list)  # the kinds of operation merged


# At most this many operations left apart on a line whose iterations (many more of them)
# were otherwise merged: the glue of a batched scan, a rolled loop's first step. A fixed cost
# that does not grow with the trip count, not a cliff.
MINOR = 4


@dataclass
class Report:
    """The result of `vg.explain`; print it for the text report."""

    name: str
    forward: Stats
    gradient: Stats
    ratio: float
    compile_seconds: float
    compile_stages: dict[str, float]
    eqns: dict[str, int]
    batched: list[Found]
    unbatched: list[Found]
    hot: list[Hot]
    eager_ops: dict[str, int]
    op_floor: float
    view_zero_arrays: int
    view_zero_bytes: int
    inplace_writes: dict[str, int]
    memory: dict[str, int]
    notes: list[str] = field(default_factory=list)
    recurrences: list[Found] = field(default_factory=list)  # rolled into loops and scans

    @property
    def eager_estimate(self) -> float:
        """Seconds an eager tape would spend on per-operation dispatch alone (a lower bound)."""
        return (self.eager_ops["forward"] + self.eager_ops["backward"]) * self.op_floor

    def split_unbatched(self) -> tuple[list[Found], list[Found]]:
        """`unbatched` split into the lines the user should look at and the minor leftovers:
        at most MINOR operations on a line with at least 8 times as many merged iterations."""
        merged: dict[tuple, int] = {}
        for f in self.batched + self.recurrences:
            key = (f.src.file, f.src.line)
            merged[key] = max(merged.get(key, 0), f.count)
        minor = [f for f in self.unbatched if f.kind != "repeated" and f.count <= MINOR
                 and merged.get((f.src.file, f.src.line), 0) >= 8 * f.count]
        return [f for f in self.unbatched if not any(f is m for m in minor)], minor

    def __str__(self) -> str:
        return render(self)


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _clip(text: str, width: int = 72) -> str:
    # Long source lines would wrap the report; the file:line says where the rest is.
    return text if len(text) <= width else text[:width - 3] + "..."


def _line(src: Src | None) -> str:
    if src is None:
        return ""
    return linecache.getline(src.file, src.line).strip()


def _where(src: Src | None) -> str:
    return str(src) if src else "?"  # Src prints as file:line, the file's base name


def _loc(f: Found) -> str:
    return f"{_where(f.src)} in {f.src.func}: `{_clip(_line(f.src))}`"


def _first_call(r: Report, stages: str) -> str:
    # A call shorter than its own stages did not run them: the entry was compiled by an
    # earlier call in this process, and only those stages' times say what compiling cost.
    staged = sum(r.compile_stages.values())
    if r.compile_seconds < staged:
        return (f"  first call (compile) {fmt_time(staged)} in an earlier call (this one "
                f"found it cached, {fmt_time(r.compile_seconds)}): {stages}")
    return f"  first call (compile) {fmt_time(r.compile_seconds)}: {stages}"


def _summary(r: Report) -> list[str]:
    stages = ", ".join(f"{s} {fmt_time(r.compile_stages[s])}" for s in timing_keys()
                       if s in r.compile_stages)
    e = r.eqns
    verdict = ("within" if r.ratio <= 3 else "above") + " the cheap-gradient bound (a " \
        "reverse-mode gradient should cost about 2-3x its forward)"
    return [
        "Summary",
        (f"  forward  (compiled)  {fmt_time(r.forward.min)} min, {fmt_time(r.forward.median)} "
        f"median over {r.forward.runs} runs"),
        (f"  gradient (compiled)  {fmt_time(r.gradient.min)} min, {fmt_time(r.gradient.median)} "
        f"median over {r.gradient.runs} runs"),
        f"  gradient / forward = {r.ratio:.1f}x, {verdict}",
        _first_call(r, stages),
        (f"  operations: traced {e.get('traced', 0):,}, after cse {e.get('cse', 0):,}, "
        f"after batching {e.get('batch', 0):,}, simplified {e.get('simplify', 0):,}; "
        f"gradient graph {e.get('final', 0):,}"),
    ]


def _loops(r: Report) -> list[str]:
    out = ["", "Loops and maps found"]
    if not r.batched:
        out.append("  none: every operation ran once per call as written")
    for f in r.batched[:12]:
        out.append(f"  {f.count:>7,} x  {_loc(f)}")
        out.append(f"           -> {'; '.join(f.became[:3])}")
    if len(r.batched) > 12:
        out.append(f"  ... and {len(r.batched) - 12} more source lines")
    if r.recurrences:
        out += ["", "Recurrences (each step reads the previous one: rolled, not unrolled)"]
    for f in r.recurrences[:8]:
        out.append(f"  {f.count:>7,} x  {_loc(f)}")
        out.append(f"           -> {'; '.join(f.became[:3])}")
    out.append("")
    out.append("Not batched")
    major, minor = r.split_unbatched()
    if not major:
        out.append("  nothing: all repeated work was merged")
    for f in major[:8]:
        out.append(f"  {f.count:>7,} x  {_loc(f)}")
        out.append(f"           {f.reason}. Suggestion: {_suggest(f)}")
    if minor:
        out.append("  (a few operations left apart on lines that did batch, a fixed cost: "
                   + ", ".join(f"{_where(f.src)} x{f.count}" for f in minor[:8]) + ")")
    return out


def _suggest(f: Found) -> str:
    if f.kind == "sequential":
        return ("each step needs the previous one's result; a linear recurrence can be "
                "written with vnp.cumsum/cumprod, otherwise it runs one step at a time.")
    if f.kind == "repeated":
        return ("give the pieces one length (pad, or group equal lengths) and read them with "
                "one index array (x[idx]), or vectorize this line by hand.")
    if f.kind == "split":
        return "make the work these operations wait on batch first, or compute it up front."
    if "differ in operand shapes" in f.reason:
        return "give the iterations one shape (pad, or group equal lengths), or vectorize."
    return ("index with ints and slices (a grid of positions batches as a view), or "
            "vectorize this line by hand.")


def _hot(r: Report) -> list[str]:
    out = ["", "Where the gradient's time goes (measured per operation)"]
    if not r.hot:
        out.append(f"  not profiled: the gradient graph has {r.eqns.get('final', 0):,} "
                   "operations, more than the compile cache keeps")
    for h in r.hot:
        side = "backward" if h.backward else "forward "
        out.append(f"  {fmt_time(h.seconds):>9} {h.share:5.0%}  {side} {h.what}  {h.shapes}")
        if h.src:
            out.append(f"{'':27}from {_where(h.src)}: `{_clip(_line(h.src))}`")
    return out


def _eager(r: Report) -> list[str]:
    ops = r.eager_ops
    writes = ", ".join(f"{k} x{n:,}" for k, n in sorted(r.inplace_writes.items(),
                                                         key=lambda kv: -kv[1])[:4])
    return [
        "", "Why eager AD would be slow on this code",
        (f"  an eager tape would dispatch {ops['forward']:,} forward and about "
        f"{ops['backward']:,} backward operations; at {fmt_time(r.op_floor)} each (one NumPy "
        f"call on a tiny array, measured here) that is at least {fmt_time(r.eager_estimate)} "
        "of dispatch alone"),
        (f"  per-view gradients would allocate {r.view_zero_arrays:,} dense zero arrays "
        f"({_mb(r.view_zero_bytes)}): one full copy of the base for every slice read"),
        f"  {sum(r.inplace_writes.values()):,} in-place writes would be rejected or copied by "
        f"a tape-based AD" + (f" ({writes})" if writes else ""),
    ]


def _memory(r: Report) -> list[str]:
    m = r.memory
    return ["", "Memory (tracemalloc peak of one call; arrays the compiled code allocates)",
            f"  forward  {_mb(m['forward_peak'])} peak{_arrays(m['forward_arrays'])}",
            f"  gradient {_mb(m['gradient_peak'])} peak{_arrays(m['gradient_arrays'])}"]


def _arrays(n: int) -> str:
    return f", {n} arrays" if n >= 0 else ""


_PARTS = {"summary": _summary, "loops": _loops, "hot": _hot, "eager": _eager, "memory": _memory}


def render(r: Report, parts: tuple[str, ...] = tuple(_PARTS)) -> str:
    """The text report of `r`, made of the sections named in `parts` (default: all of them:
    summary, loops, hot, eager, memory)."""
    lines = [f"vecgrad.explain: gradient of {r.name}", ""]
    for name in parts:
        lines += _PARTS[name](r)
    return "\n".join(lines)


def summary(r: Report) -> str:
    """The short report: the Summary and the "Loops and maps found" sections."""
    return render(r, ("summary", "loops"))
