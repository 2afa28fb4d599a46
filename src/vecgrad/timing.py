"""Timing helpers shared by `explain`, the demo and the benchmark."""
from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Stats:
    """Seconds per call: the min and median over `runs` samples of `number` calls each."""

    min: float
    median: float
    runs: int
    number: int


def measure(fn: Callable[[], Any], repeat: int | None = None, budget: float = 1.0,
            min_sample: float = 2e-4) -> Stats:
    """Time `fn()` with `time.perf_counter`, after one warm-up call.

    Each sample averages `number` calls, chosen so that a sample lasts at least `min_sample`
    seconds. Without `repeat`, the number of samples adapts so the total is about `budget`
    seconds (between 5 and 1000 samples).
    """
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    number = max(1, int(min_sample / max(first, 1e-9)))
    sample = _sample(fn, number)
    if repeat is None:
        repeat = int(min(1000, max(5, budget / max(sample * number, 1e-9))))
    samples = [sample] + [_sample(fn, number) for _ in range(repeat - 1)]
    return Stats(min(samples), statistics.median(samples), repeat, number)


def _sample(fn: Callable[[], Any], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes that NumPy and Python allocate during one call of `fn()` (tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def fmt_time(s: float) -> str:
    """Seconds, printed in a readable unit."""
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table, columns left-aligned to the widest cell."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
             for r in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
