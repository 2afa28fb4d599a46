"""`bench/run.py --plot out.png`: a bar chart of gradient cost per engine per seed, in multiples
of the hand-vectorized NumPy forward (log scale). Needs matplotlib (the `bench` extra)."""
from __future__ import annotations

import importlib.util
from pathlib import Path


def have_matplotlib() -> bool:
    """Whether matplotlib is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def bar_chart(recs: list[dict], names: list[str], path: str, title: str) -> None:
    """Write the chart of `recs` (from compare.run) for the seeds `names` to `path`."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    from compare import REFERENCE

    engines = list(dict.fromkeys(r["engine"] for r in recs if r["engine"] != REFERENCE))
    by = {(r["engine"], r["seed"]): r for r in recs}
    width = 0.8 / len(engines)
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for k, e in enumerate(engines):
        xs = [i + (k - (len(engines) - 1) / 2) * width for i, n in enumerate(names)
              if (e, n) in by]
        ys = [by[e, n]["ratio"] for n in names if (e, n) in by]
        bars = ax.bar(xs, ys, width, label=e)
        ax.bar_label(bars, [_label(by[e, n]) for n in names if (e, n) in by], fontsize=7,
                     padding=1)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="NumPy forward = 1x")
    ax.set_yscale("log")
    top = max(r["ratio"] for r in recs)
    ax.set_ylim(min(0.5, min(r["ratio"] for r in recs) / 2), top * 8)  # room for the legend
    ax.set_xticks(range(len(names)), [f"seed {n}" for n in names])
    ax.set_ylabel("gradient time / hand-vectorized NumPy forward time (min)")
    ax.set_title(title)
    ax.legend(fontsize=8, ncols=3, loc="upper center")
    if any(r["capped"] for r in recs):
        fig.text(0.01, 0.01, "* one call timed: the first took longer than the cap",
                 fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))  # keep the footnote clear of the tick labels
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _label(r: dict) -> str:
    v = r["ratio"]
    text = f"{v:,.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 1 else f"{v:.2f}x"
    return text + ("*" if r["capped"] else "")
