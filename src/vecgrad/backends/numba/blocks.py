"""Index arithmetic shared by the kernel generator, and the whole-array blocks of a kernel that
are not loop nests over one output: writes at a basic index, concatenation, and (in a rolled
loop's step kernel, loop.py) matrix products handed to BLAS through numba's `np.dot`.

`Blocks` is a part of `kernel.KernelSource` (it uses its alloc / nest / read / store / emit).
"""
from __future__ import annotations

import math

import numpy as np

from ...index import index_shape
from ...ir import Const, Eqn
from .regions import dot_form, letters

# A matrix product in a step kernel with at least this many multiply-adds calls np.dot (BLAS:
# about 0.3 us to enter); smaller ones are loop nests like any contraction.
DOT_MACS = 1 << 12


def literal(v: np.ndarray, dt: np.dtype) -> str:
    """A scalar constant of dtype dt as numba source."""
    x = v.reshape(()).item()
    if dt == np.bool_:
        return repr(bool(x))
    if dt.kind in "iu":
        return f"np.{dt.name}({int(x)})"
    x = float(x)
    s = "np.nan" if math.isnan(x) else ("np.inf" if x == math.inf else
                                       "-np.inf" if x == -math.inf else repr(x))
    return f"np.{dt.name}({s})"


def cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    return expr if src == dst else f"np.{dst.name}({expr})"


def bidx(shape: tuple[int, ...], out: tuple[int, ...], idx: list[str]) -> list[str]:
    """The index into an operand of `shape` broadcast to `out` at index `idx`."""
    off = len(out) - len(shape)
    return ["0" if d == 1 and out[off + k] != 1 else idx[off + k] for k, d in enumerate(shape)]


def ids_literal(ids: np.ndarray) -> str:
    """Static positions as a tuple literal (numba indexes a homogeneous tuple at run time)."""
    return "(" + ", ".join(str(int(i)) for i in ids) + ",)"


def getitem_idx(key: tuple, idx: list[str]) -> list[str]:
    """The index into x of element idx of x[key] (key: ints, Sl and None, or Sl and one
    static 1-d integer array)."""
    out, it = [], iter(idx)
    for k in key:
        if k is None:
            next(it)
        elif isinstance(k, int):
            out.append(str(k))
        elif hasattr(k, "arr"):  # a static integer array (regions._basic: its axis in place)
            out.append(f"{ids_literal(k.arr)}[{next(it)}]")
        else:  # Sl
            out.append(f"({k.start} + {k.step} * {next(it)})")
    return out + list(it)


class Blocks:
    """Kernel blocks written as whole-array steps (a mixin of kernel.KernelSource)."""

    blas = False  # (set in a step kernel: matrix products may call np.dot)

    def write(self, e: Eqn) -> None:
        """setitem / setitem_add at a basic index: the base copied, then the region written
        (+= where an add: a basic index names each element once)."""
        base, v = e.inputs
        dt = e.out.aval.dtype
        self.alloc(e.out)
        idx, d = self.nest(e.out.aval.shape, 1)
        self.emit(d, f"{self.store(e.out, idx)} = {self.read(base, idx, dt)}")
        key = e.params["idx"]
        region = index_shape(base.aval.shape, key)
        ridx, d = self.nest(region, 1)
        ref = self.store(e.out, getitem_idx(key, ridx))
        vidx = bidx(v.aval.shape, region, ridx)
        if e.prim.name == "setitem":
            self.emit(d, f"{ref} = {self.read(v, vidx, dt)}")
            return
        pdt = np.result_type(dt, v.aval.dtype)  # (NumPy adds in the promoted type)
        self.emit(d, f"{ref} = {cast(f'{cast(ref, dt, pdt)} + {self.read(v, vidx, pdt)}', pdt, dt)}")

    def concatenate(self, e: Eqn) -> None:
        """Each operand copied into its block of the output along the axis."""
        axis, dt, off = e.params["axis"], e.out.aval.dtype, 0
        self.alloc(e.out)
        for x in e.inputs:
            idx, d = self.nest(x.aval.shape, 1)
            oidx = list(idx)
            oidx[axis] = f"({off} + {idx[axis]})"
            self.emit(d, f"{self.store(e.out, oidx)} = {self.read(x, idx, dt)}")
            off += x.aval.shape[axis]

    def stack(self, e: Eqn) -> None:
        """Operand k copied into index k of the new axis."""
        axis, dt = e.params["axis"], e.out.aval.dtype
        self.alloc(e.out)
        for k, x in enumerate(e.inputs):
            idx, d = self.nest(x.aval.shape, 1)
            self.emit(d, f"{self.store(e.out, idx[:axis] + [str(k)] + idx[axis:])} = "
                      f"{self.read(x, idx, dt)}")

    def static_gather(self, e: Eqn) -> None:
        """take / segment_sum at static positions (at most STATIC_IDS: a tuple literal)."""
        axis, dt = e.params["axis"], e.out.aval.dtype
        ids = ids_literal(e.params["ids"].arr)
        x = e.inputs[0]
        if e.prim.name == "take":
            self.alloc(e.out)
            idx, d = self.nest(e.out.aval.shape, 1)
            src = list(idx)
            src[axis] = f"{ids}[{idx[axis]}]"
            self.emit(d, f"{self.store(e.out, idx)} = {self.read(x, src, dt)}")
            return
        self.alloc(e.out, "0.0")  # segment_sum: each element added at its label
        idx, d = self.nest(x.aval.shape, 1)
        dst = list(idx)
        dst[axis] = f"{ids}[{idx[axis]}]"
        self.emit(d, f"{self.store(e.out, dst)} += {self.read(x, idx, dt)}")

    def dot(self, e: Eqn) -> bool:
        """A matrix (or matrix-vector) product as np.dot of the operands as they lie (a
        transpose is numba's F-ordered view, no copy); muladd adds its third operand after.
        False where e is not one or is too small: a loop nest then."""
        form = dot_form(e.params["spec"])
        dt = e.out.aval.dtype
        if not self.blas or form is None or any(a.aval.dtype != dt for a in e.inputs[:2]):
            return False
        ins, _ = letters(e.params["spec"])  # type: ignore[misc]
        size: dict[str, int] = {}
        for s_, a in zip(ins, e.inputs):
            size.update(zip(s_, a.aval.shape))
        if math.prod(size.values()) < DOT_MACS:
            return False
        left, t_left, t_right = form
        ops = [self.matrix(e.inputs[left], t_left), self.matrix(e.inputs[1 - left], t_right)]
        name = self.fresh("t")
        self.names[e.out], self.kind[e.out] = name, "arr"
        self.emit(1, f"{name} = np.dot({ops[0]}, {ops[1]})")
        if e.prim.name == "muladd":
            c, shape = e.inputs[2], e.out.aval.shape
            idx, d = self.nest(shape, 1)
            self.emit(d, f"{name}[{', '.join(idx)}] += {self.read(c, bidx(c.aval.shape, shape, idx), dt)}")
        return True

    def matrix(self, a: object, transposed: bool) -> str:
        """An expression of array a (transposed if asked) that np.dot takes as it lies."""
        flip = transposed
        while not isinstance(a, Const) and self.kind.get(a) == "view" and \
                self.eqn[a].prim.name in ("transpose", "relayout") and a.aval.ndim == 2:
            flip, a = not flip, self.eqn[a].inputs[0]
        if isinstance(a, Const):
            name = self.const_names[id(a.value)]  # (C-contiguous: loop.py passes them so)
        elif self.kind.get(a) == "in" or self.kind.get(a) == "arr" and a not in self.perm:
            name = self.names[a]
        elif self.kind.get(a) == "arr" and self.perm[a] == (1, 0):
            name, flip = self.names[a], not flip
        else:  # a view or an inline value: a fresh C-ordered array
            name = self.copy_out(a)
        return f"{name}.T" if flip and a.aval.ndim == 2 else name
