"""Specs of the core primitives: elementwise, reductions, indexing and writes, shapes,
contractions and the fused nn primitives."""
from __future__ import annotations

import numpy as np
from spec_lib import (
    AX,
    MASK,
    UN,
    Spec,
    _add_ref,
    _set_ref,
    _softmax,
    above_m1,
    away0,
    binary,
    boolean,
    idx,
    normal,
    positive,
    small_ints,
    unary,
    with_zeros,
)


def _prod_grad_ref(g, x, axes):
    """g times the product of the other factors along `axes`, one element at a time."""
    rest = [a for a in range(x.ndim) if a not in axes]
    xt = np.transpose(x, rest + list(axes)).reshape(g.shape + (-1,))
    out = np.empty(xt.shape, np.result_type(g, x))
    for i in range(xt.shape[-1]):
        out[..., i] = g * np.prod(np.delete(xt, i, axis=-1), axis=-1)
    out = out.reshape(tuple(x.shape[a] for a in rest + list(axes)))
    return np.transpose(out, np.argsort(rest + list(axes)))


def _zeros_in(nz: int):
    """g normal; x with `nz` zeros in every row of the last axis."""
    return (normal, with_zeros(nz))


SPECS: list[Spec] = [
    # unary elementwise
    unary("neg", np.negative),
    unary("exp", np.exp),
    unary("log", np.log, positive),
    unary("log1p", np.log1p, above_m1),
    unary("expm1", np.expm1),
    unary("sqrt", np.sqrt, positive),
    unary("abs", np.abs, away0),
    unary("tanh", np.tanh),
    unary("sin", np.sin),
    unary("cos", np.cos),
    unary("logistic", lambda x: 1 / (1 + np.exp(-x))),
    unary("sign", np.sign),
    unary("stop_gradient", lambda x: x),
    unary("logical_not", np.logical_not, boolean),
    Spec("powc", UN, np.square, {"p": 2}, label="p2"),
    Spec("powc", UN, lambda x: x ** 3, {"p": 3}, label="p3"),
    Spec("powc", UN, np.sqrt, {"p": 0.5}, positive, label="p0.5"),
    Spec("powc", UN, lambda x: 1 / x, {"p": -1}, away0, label="p-1"),
    Spec("powc", UN, np.ones_like, {"p": 0}, label="p0"),
    # binary elementwise
    binary("add", np.add),
    binary("sub", np.subtract),
    binary("mul", np.multiply),
    binary("div", np.divide, (normal, away0)),
    binary("pow", np.power, (positive, normal)),
    binary("maximum", np.maximum),
    binary("minimum", np.minimum),
    binary("lt", np.less, small_ints),
    binary("le", np.less_equal, small_ints),
    binary("gt", np.greater, small_ints),
    binary("ge", np.greater_equal, small_ints),
    binary("eq", np.equal, small_ints),
    binary("ne", np.not_equal, small_ints),
    binary("logical_and", np.logical_and, boolean),
    binary("logical_or", np.logical_or, boolean),
    Spec("where", ((3, 4),) * 3, np.where, gens=(boolean, normal, normal), wrt=(1, 2),
         bcast=(((3, 1), (4,), ()), ((4,), (2, 3, 1), (1, 4)))),
    Spec("cast", UN, lambda x: x.astype(np.float32), {"dtype": np.dtype(np.float32)},
         tol=1e-3, eps=1e-2, label="f64-f32"),
    Spec("cast", UN, lambda x: x.astype(np.float64), {"dtype": np.dtype(np.float64)},
         gens=boolean, label="bool-f64"),
    # reductions
    Spec("reduce_sum", ((3, 4, 5),), lambda x: x.sum((0, 2)), AX((0, 2)), label="02"),
    Spec("reduce_sum", ((3, 4),), np.sum, AX((0, 1)), label="all"),
    Spec("reduce_sum", ((3, 4),), lambda x: x, AX(()), label="none"),
    Spec("reduce_max", ((3, 4, 5),), lambda x: x.max(1), AX((1,)), label="1"),
    Spec("reduce_max", ((3, 4),), np.max, AX((0, 1)), label="all"),
    Spec("reduce_min", ((3, 4, 5),), lambda x: x.min((0, 2)), AX((0, 2)), label="02"),
    # many short rows: the transposed-copy fast path of reduce_along
    Spec("reduce_max", ((5, 8, 6),), lambda x: x.max(2), AX((2,)), label="short-rows"),
    Spec("reduce_sum", ((40, 7),), lambda x: x.sum(1), AX((1,)), label="short-rows"),
    Spec("reduce_prod", ((3, 4),), lambda x: x.prod(1), AX((1,)), away0, label="1"),
    Spec("reduce_prod", ((3, 4),), lambda x: x.prod(1), AX((1,)), with_zeros(1),
         label="one-zero"),
    Spec("reduce_prod", ((3, 4),), lambda x: x.prod(1), AX((1,)), with_zeros(2),
         label="two-zeros"),
    Spec("reduce_prod", ((2, 3, 2),), lambda x: x.prod((0, 2)), AX((0, 2)), with_zeros(1),
         label="02-zeros"),
    Spec("reduce_prod", ((3, 5),), lambda x: x.prod(1), AX((1,)), with_zeros(3),
         label="three-zeros"),
    Spec("reduce_prod", ((4, 3),), lambda x: x.prod(0), AX((0,)), with_zeros(2),
         label="zeros-across"),  # rows with 0, 1, ... zeros along the reduced axis 0
    *[Spec("reduce_prod_grad", (gs, xs), lambda g, x, a=a: _prod_grad_ref(g, x, a), AX(a),
           _zeros_in(nz), label=f"{lab}-{nz}") for gs, xs, a, lab in
      [((3,), (3, 4), (1,), "1"), ((4,), (3, 4), (0,), "0"), ((3,), (2, 3, 2), (0, 2), "02"),
       ((), (5,), (0,), "all")] for nz in (0, 1, 2, 3)],
    # indexing and writes
    Spec("getitem", ((4, 5, 6),), lambda x: x[1, ::2, -1], idx((1, slice(None, None, 2), -1)),
         label="int-step"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[::-2, None, ..., 1:5:3],
         idx((slice(None, None, -2), None, Ellipsis, slice(1, 5, 3))), label="neg-step-none"),
    Spec("getitem", ((4, 5),), lambda x: x[np.array([3, -1, 0, 3])],
         idx(np.array([3, -1, 0, 3])), label="int-array"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[:, [0, 2], [1, 1]],
         idx((slice(None), np.array([0, 2]), np.array([1, 1]))), label="int-arrays"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[1, :, [0, 2]],
         idx((1, slice(None), np.array([0, 2]))), label="int-slice-array"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[[0, 2], 1:4, [1, 1]],
         idx((np.array([0, 2]), slice(1, 4), np.array([1, 1]))), label="separated-arrays"),
    Spec("getitem", ((3, 4),), lambda x: x[MASK], idx(MASK), label="bool-mask"),
    Spec("setitem", ((4, 5), (5,)), _set_ref((slice(1, 4, 2), slice(None))),
         idx((slice(1, 4, 2), slice(None))), label="basic-bcast"),
    Spec("setitem", ((4, 5), ()), _set_ref((-1, 2)), idx((-1, 2)), label="scalar"),
    Spec("setitem", ((4, 5), (3, 5)), _set_ref(np.array([2, 0, 3])),
         idx(np.array([2, 0, 3])), label="int-array"),
    Spec("setitem", ((4, 5, 6), (2, 5)), _set_ref((np.array([0, 2]), slice(None), np.array([1, 3]))),
         idx((np.array([0, 2]), slice(None), np.array([1, 3]))), batchable=False,
         label="separated-arrays"),
    Spec("setitem_add", ((4, 5), (2, 1)), _add_ref((slice(0, 2), slice(None))),
         idx((slice(0, 2), slice(None))), label="basic"),
    Spec("setitem_add", ((4, 5), (4, 5)), _add_ref(np.array([1, 1, 3, 1])),
         idx(np.array([1, 1, 3, 1])), label="repeated"),
    Spec("full", (), lambda: np.full((2, 3), 1.5, np.float32),
         {"shape": (2, 3), "dtype": np.dtype(np.float32), "value": 1.5}),
    # shapes
    Spec("reshape", ((3, 4),), lambda x: x.reshape(2, 6), {"shape": (2, 6)}),
    Spec("transpose", ((2, 3, 4),), lambda x: x.transpose(1, 2, 0), {"perm": (1, 2, 0)}),
    *[Spec("relayout", (shape,), lambda x, p=perm: x.transpose(p), {"perm": perm},
           label=f"{shape} {perm}")
      for shape, perm in [((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 2, 0)),
                          # big enough for transpose_copy's tiles: first axis last, last first,
                          # and reversed
                          ((40, 30, 32), (1, 2, 0)), ((40, 30, 32), (2, 0, 1)),
                          ((40, 30, 32), (2, 1, 0))]],
    Spec("broadcast_to", ((3, 1),), lambda x: np.broadcast_to(x, (2, 3, 4)),
         {"shape": (2, 3, 4)}),
    Spec("concatenate", ((2, 3), (2, 1), (2, 2)), lambda *xs: np.concatenate(xs, 1),
         {"axis": 1}),
    Spec("stack", ((2, 3), (2, 3), (2, 3)), lambda *xs: np.stack(xs, 1), {"axis": 1}),
    Spec("stack", ((), ()), lambda *xs: np.stack(xs, 0), {"axis": 0}, label="scalars"),
    # contractions
    *[Spec("einsum", shapes, lambda *xs, s=spec: np.einsum(s, *xs), {"spec": spec}, label=spec)
      for spec, shapes in [
          ("ij,jk->ik", ((3, 4), (4, 2))), ("ij,kj->ik", ((3, 4), (2, 4))),
          ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))), ("i,i->", ((4,), (4,))),
          ("i,j->ij", ((3,), (4,))), ("ij,j->i", ((3, 4), (4,))), ("ijk->kj", ((2, 3, 4),)),
          ("ij->", ((3, 4),)), ("ii->i", ((3, 3),)), ("ii->", ((3, 3),)),
          ("ij,k->i", ((3, 4), (2,))), ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
          ("iij,jk->ik", ((3, 3, 2), (2, 4)))]],
    *[Spec("muladd", shapes, lambda x, y, c, s=spec: np.einsum(s, x, y) + c, {"spec": spec},
           label=spec + " " + str(shapes[2]))
      for spec, shapes in [("ij,jk->ik", ((3, 4), (4, 2), (2,))),
                           ("ij,jk->ik", ((3, 4), (4, 2), (3, 1))),
                           ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2), (2, 3, 2))),
                           ("i,i->", ((4,), (4,), ()))]],
    # fused nn
    Spec("softmax", ((3, 4),), lambda x: _softmax(x, 1), {"axis": 1}, label="1"),
    Spec("softmax", ((3, 4),), lambda x: _softmax(x, 0), {"axis": 0}, label="0"),
    Spec("softmax", ((5, 8, 6),), lambda x: _softmax(x, 2), {"axis": 2}, label="short-rows"),
    Spec("logsumexp", ((3, 4),), lambda x: np.log(np.exp(x).sum(1)), {"axis": 1}),
    *[Spec("softmax_vjp", shapes, lambda g, p, a=axis: p * (g - (g * p).sum(a, keepdims=True)),
           {"axis": axis}, label=label)
      for shapes, axis, label in [(((3, 4), (3, 4)), 1, "1"), (((3, 4), (3, 4)), 0, "0"),
                                  (((5, 8, 6), (5, 8, 6)), 2, "short-rows")]],
    Spec("logsumexp", ((40, 7),), lambda x: np.log(np.exp(x).sum(1)), {"axis": 1},
         label="short-rows"),
    *[Spec("norm", shapes, lambda x, s=spec: np.sqrt(np.einsum(s, x ** 2)), {"spec": spec},
           away0, label=spec)
      for spec, shapes in [("abc->ca", ((2, 3, 4),)), ("ij->", ((3, 4),)),
                           ("ij->j", ((3, 4),)), ("ij->ji", ((3, 4),))]],
    *[Spec("sqdist", shapes, lambda x, y: ((x[:, None] - y[None]) ** 2).sum(-1), label=label)
      for shapes, label in [(((4, 3), (5, 3)), "pairs"), (((6, 1), (2, 1)), "one coordinate"),
                            (((1, 5), (3, 5)), "one row")]],
]
