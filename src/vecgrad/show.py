"""`vg.show`: the IR of a function at each pipeline stage, pretty-printed."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .api import Transformed, grad
from .config import config
from .errors import ArgumentError, _where, user_src
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


def loss_of(fun: Callable, argnums: Any, who: str) -> tuple[Callable, Any]:
    """The loss that a tool (`who`: vg.explain, vg.show) differentiates, and its argnums.

    `vg.grad(loss, argnums=k)`, `vg.value_and_grad(...)` or `vg.jit(loss)` stand for `loss`,
    as users who follow JAX write them; any other transformed function is not a scalar loss,
    so it gets a typed error rather than the confusing one of grad(grad(loss))."""
    if not isinstance(fun, Transformed):
        return fun, argnums
    plain = not fun.has_aux and not fun._static and not isinstance(fun.fun, Transformed)
    if plain and fun.kind in ("grad", "value_and_grad"):
        return fun.fun, fun.argnums
    if plain and fun.kind == "jit":
        return fun.fun, argnums
    raise ArgumentError(
        f"{who}(f, *args) works on the gradient of a scalar loss f, but got {fun!r}: pass "
        f"the loss function itself{_where(user_src())}")
