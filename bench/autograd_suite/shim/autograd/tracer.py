"""autograd.tracer: `isbox` is true of vecgrad's traced values (there are no other boxes)."""
from typing import Any


def isbox(x: Any) -> bool:
    from vecgrad.tracing import Tracer
    return isinstance(x, Tracer)
