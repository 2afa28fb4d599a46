"""`np.vectorize(pyfunc)(...)` of traced arrays: pyfunc called on each element, as NumPy does.

NumPy's vectorize converts its arguments to plain arrays itself (it does not dispatch), so
while vecgrad traces, its `__call__` comes here where an argument is traced (pyarrays). The
arguments broadcast; pyfunc runs on each element (a traced NumPy scalar) in C order, and the
results are stacked: one traced operation per element and call, which vecgrad batches like a
loop. Keyword arguments are vectorized too, as NumPy's. The result's dtype is `otypes` or
that of the first element's result (NumPy's rule); several outputs (pyfunc returning a tuple)
are a tuple of arrays. A pyfunc that branches on an element's value (`if a > 0`, `max(a,
0.0)`) is traced on every path and the paths' results selected per element (_branches.py). `signature=` and
`excluded=` go to vnp.vectorize's loop over core sub-arrays (_misc.vectorize)."""
from __future__ import annotations

import math
from typing import Any

import numpy as _np

from . import _ops
from ._base import _shape, asarray, astype, queried_dtype
from ._branches import branched

__all__: list[str] = []


def vectorized_call(vec: Any, args: tuple, kwargs: dict) -> Any:
    """`vec(*args, **kwargs)` for an np.vectorize (or vnp.vectorize) object `vec` with no
    signature and nothing excluded, arguments traced."""
    keys = list(kwargs)
    vals = [asarray(a) for a in (*args, *kwargs.values())]
    shape = _np.broadcast_shapes(*[_shape(v) for v in vals])
    if math.prod(shape) == 0:
        if not vec.otypes:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        outs = [_np.zeros(shape, t) for t in vec.otypes]
        return outs[0] if len(outs) == 1 else tuple(outs)
    vals = [_ops.broadcast_to(v, shape) for v in vals]
    npos = len(args)
    results = []
    for idx in _np.ndindex(*shape):
        elems = [v[idx] for v in vals]
        results.append(branched(vec.pyfunc, elems, keys, npos, vec.otypes))
    multi = isinstance(results[0], tuple)
    cols = list(zip(*results)) if multi else [results]
    otypes = [_np.dtype(t) for t in vec.otypes] if vec.otypes else \
        [queried_dtype(asarray(c[0])) for c in cols]
    outs = [_ops.reshape(_ops.stack([astype(asarray(r), t) for r in c]), shape)
            for c, t in zip(cols, otypes)]
    return tuple(outs) if multi else outs[0]
