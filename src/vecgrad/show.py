"""`vg.show`: the IR of a function at each pipeline stage, pretty-printed."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .api import grad, loss_of
from .config import config
from .ir import pretty
from .pipeline import describe, graph_keys


def show(fun: Callable, *args: Any, argnums: int | tuple = 0, max_eqns: int = 60,
         file: Any = None) -> str:
    """Print (and return) the pipeline (`vecgrad.pipeline`), then the traced graph, each pass's
    result in pipeline order, the gradient graph and the generated code. Long graphs are cut at
    `max_eqns` equations per stage. `fun` is the loss, or `vg.grad(loss, argnums=k)` for it."""
    fun, argnums = loss_of(fun, argnums, "vg.show")
    with config(keep_stages=True):  # (a cached entry without its stages compiles again)
        entry, _ = grad(fun, argnums=argnums).entry(*args)
    parts = [f"=== pipeline: {describe()}"]
    order = {k: i for i, k in enumerate(graph_keys())}
    for name, g in sorted(entry.stages.items(), key=lambda kv: order.get(kv[0], len(order))):
        parts.append(f"=== {name}: {len(g.eqns)} equations\n{pretty(g, max_eqns)}")
    parts.append(f"=== generated code\n{entry.compiled.source}")
    text = "\n\n".join(parts)
    print(text, file=file)
    return text
