"""Spec of the custom_vjp_call primitive (vecgrad.custom): the value of its last operand,
passed through. The spec's rule has a bwd that returns no cotangents, so the primitive's
derivative is the honest one of a pass-through (the user's rules are tested end to end in
test_custom.py)."""
from __future__ import annotations

import numpy as np
from spec_lib import Spec

import vecgrad as vg
from vecgrad.custom import Rule
from vecgrad.ir import Aval


def _ident(x, r):
    return x


PASS = vg.custom_vjp(_ident)
PASS.defvjp(lambda x, r: (x, r), lambda r, g: (None,))
_F64 = np.dtype(np.float64)


def _rule(shapes: tuple) -> dict:
    avals = tuple(Aval(s, _F64) for s in shapes)
    return {"rule": Rule(PASS, (), (("*",),), ("*",), (("*",), (0,), (avals[-1],)),
                         avals)}


SPECS: list[Spec] = [
    Spec("custom_vjp_call", ((3, 4), (3, 4), (3, 4)), lambda x, r, p: p, _rule),
    Spec("custom_vjp_call", ((2,), (), (5,)), lambda x, r, p: p, _rule, label="packed"),
]
