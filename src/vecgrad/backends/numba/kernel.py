"""A region of the final graph becomes the source of one numba function of loop nests.

Shapes are static, so every loop bound is a literal and every broadcast, reshape, transpose
or slice is index arithmetic at the read, never a copy. Each value of the region is one of:

- an *input* (an array argument, or a scalar for 0-d ones),
- a *view* (reshape, transpose, broadcast, basic slicing): reads go to its source, remapped,
- an *inline* elementwise value, used once by a consumer that reads each of its elements
  once: it is an expression at that read (chains of elementwise ops fuse into one loop),
- *materialized*: a local array (a scalar if 0-d) filled by its own loop nest.

Reductions accumulate in the loop order of their operand's memory; contractions choose a
loop order from the largest operand's layout and accumulate in a scalar when every summed
letter is innermost, in the output array otherwise.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ...index import index_shape
from ...ir import Atom, Const, Eqn, Var
from .blocks import Blocks, bidx, cast, getitem_idx, literal
from .regions import (
    BLOCKS,
    CONTRACTIONS,
    REDUCTIONS,
    SLICES,
    STATIC_GATHERS,
    VIEWS,
    WRITES,
    Region,
    letters,
)

# A contraction accumulating into its output along an output letter of at most UNROLL
# elements, with at least UNROLL_MACS multiply-adds, has that loop written out (`unrolled`).
UNROLL = 16
UNROLL_MACS = 1 << 13
UNROLLED = "# unrolled"  # (marks the loop body holding one, for _innermost_trips)


def _call(fn: str, *args: str) -> str:
    return f"np.{fn}({', '.join(args)})"


# Elementwise primitives as scalar expressions of their (already cast) operands.
SCALAR: dict[str, Callable[..., str]] = {
    "add": lambda a, b: f"({a} + {b})", "sub": lambda a, b: f"({a} - {b})",
    "mul": lambda a, b: f"({a} * {b})", "div": lambda a, b: f"({a} / {b})",
    "neg": lambda a: f"(-{a})", "stop_gradient": lambda a: a,
    "pow": lambda a, b: f"np.power({a}, {b})",
    "maximum": lambda a, b: f"np.maximum({a}, {b})",
    "minimum": lambda a, b: f"np.minimum({a}, {b})",
    "gt": lambda a, b: f"({a} > {b})", "lt": lambda a, b: f"({a} < {b})",
    "ge": lambda a, b: f"({a} >= {b})", "le": lambda a, b: f"({a} <= {b})",
    "eq": lambda a, b: f"({a} == {b})", "ne": lambda a, b: f"({a} != {b})",
    "logical_and": lambda a, b: f"({a} and {b})", "logical_or": lambda a, b: f"({a} or {b})",
    "logical_not": lambda a: f"(not {a})",
    "where": lambda c, a, b: f"({a} if {c} else {b})",
    **{n: functools.partial(_call, n) for n in [
        "exp", "log", "log1p", "expm1", "sqrt", "abs", "fabs", "sign", "tanh", "sin", "cos",
        "tan", "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
        "log10", "floor", "ceil", "trunc",   # (not log2, exp2: numba 0.68 mistypes float32)
        "hypot", "arctan2", "copysign", "fmax", "fmin", "logaddexp"]},
}
_NEEDS_CAST_RESULT = frozenset({"gt", "lt", "ge", "le", "eq", "ne", "logical_and",
                                "logical_or", "logical_not"})


def compute_dtype(e: Eqn) -> np.dtype:
    """The dtype an elementwise op computes in (NumPy's promotion; floats out of bools)."""
    dts = [a.aval.dtype for a in e.inputs]
    if e.prim.name == "where":
        dts = dts[1:]
    if e.prim.name == "cast" or e.prim.name in _NEEDS_CAST_RESULT and \
            e.prim.name.startswith("logical"):
        return e.out.aval.dtype if e.prim.name == "cast" else np.dtype(np.bool_)
    dt = np.result_type(*dts)
    if e.out.aval.dtype.kind == "f" and dt.kind in "biu":
        return e.out.aval.dtype
    return dt


def _reshape_idx(src: tuple[int, ...], dst: tuple[int, ...], idx: list[str]) -> list[str]:
    """The index into an array of shape src of element idx of its reshape to dst."""
    if [d for d in src if d != 1] == [d for d in dst if d != 1]:
        it = iter(i for i, d in zip(idx, dst) if d != 1)
        return ["0" if d == 1 else next(it) for d in src]
    terms = [(i, math.prod(dst[k + 1:])) for k, i in enumerate(idx) if dst[k] != 1]
    flat = "(" + (" + ".join(i if p == 1 else f"{i} * {p}" for i, p in terms) or "0") + ")"
    out = []
    for k, d in enumerate(src):
        q = math.prod(src[k + 1:])
        e = flat if q == 1 else f"({flat} // {q})"
        # (no remainder on the first axis longer than 1: the quotient is below d there; the
        # kernels' extents are arguments (generic.py), where % and // cost a division each)
        out.append("0" if d == 1 else e if all(s == 1 for s in src[:k]) else f"({e} % {d})")
    return out




class KernelSource(Blocks):
    """The source of one region's kernel: `make()` returns (source, args, outputs)."""

    def __init__(self, region: Region, live_out: set[Var], name: str, blas: bool = False):
        self.region, self.name, self.blas = region, name, blas
        # Values stored straight into a 1-d slice expression (a loop's stacked outputs: the
        # step writes row t of the loop's result, loop.py), and those that were.
        self.rows: dict[Var, str] = {}
        self.in_rows: set[Var] = set()
        self.live_out = live_out
        self.lines: list[str] = []
        self.args: list[Atom] = []
        self.names: dict[Var, str] = {}  # inputs and materialized values
        self.kind: dict[Var, str] = {}   # "in" | "view" | "inline" | "arr"
        self.eqn: dict[Var, Eqn] = {}
        self.counter = 0
        self.const_names: dict[int, str] = {}
        self.perm: dict[Var, tuple[int, ...]] = {}  # storage order of materialized values
        self.short = False  # (set by make: every innermost loop at most UNROLL long)
        uses: dict[Var, int] = {}
        for e in region.eqns:
            for a in e.inputs:
                if isinstance(a, Var):
                    uses[a] = uses.get(a, 0) + 1
        self.uses = uses
        self.consumer: dict[Var, Eqn] = {}
        for e in region.eqns:
            for a in e.inputs:
                if isinstance(a, Var):
                    self.consumer[a] = e

    # ------------------------------------------------------------------ reading values
    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def ref_input(self, a: Atom) -> None:
        """Make a (defined outside the region) an argument of the kernel, once."""
        if isinstance(a, Const):
            if a.aval.size == 1 or id(a.value) in self.const_names:
                return  # (scalars are literals in the source)
            self.const_names[id(a.value)] = f"a{len(self.args)}"
        else:
            if a in self.kind:
                return
            self.kind[a] = "in"
            self.names[a] = f"a{len(self.args)}"
        self.args.append(a)

    def read(self, a: Atom, idx: list[str], dt: np.dtype | None = None) -> str:
        """Source of element idx of a (cast to dt if given)."""
        src = a.aval.dtype
        if isinstance(a, Const):
            if a.aval.size == 1:
                return literal(a.value, dt or src)
            expr = f"{self.const_names[id(a.value)]}[{', '.join(idx)}]"
        else:
            k = self.kind[a]
            if k == "view":
                expr = self.read_view(self.eqn[a], idx)
            elif k == "inline":
                expr = self.scalar_expr(self.eqn[a], idx)
            elif a.aval.ndim == 0:
                expr = self.names[a]
            else:
                expr = f"{self.names[a]}[{', '.join(self.storage(a, idx))}]"
        return cast(expr, src, dt) if dt is not None else expr

    def read_view(self, e: Eqn, idx: list[str]) -> str:
        x, name, p = e.inputs[0], e.prim.name, e.params
        src, dst = x.aval.shape, e.out.aval.shape
        if name == "reshape":
            j = _reshape_idx(src, dst, idx)
        elif name in ("transpose", "relayout"):
            j = [""] * len(src)
            for k, ax in enumerate(p["perm"]):
                j[ax] = idx[k]
        elif name == "broadcast_to":
            j = bidx(src, dst, idx)
        else:
            j = getitem_idx(p["idx"], idx)
        return self.read(x, j)

    def scalar_expr(self, e: Eqn, idx: list[str]) -> str:
        name, out = e.prim.name, e.out.aval
        if name == "cast":
            return cast(self.read(e.inputs[0], bidx(e.inputs[0].aval.shape, out.shape, idx)),
                        e.inputs[0].aval.dtype, out.dtype)
        dt = compute_dtype(e)
        ops = [self.read(a, bidx(a.aval.shape, out.shape, idx),
                         None if (name == "where" and k == 0) else dt)
               for k, a in enumerate(e.inputs)]
        if name == "logistic":
            h = literal(np.array(0.5), dt)
            expr = f"({h} * np.tanh({ops[0]} * {h}) + {h})"
        else:
            expr = SCALAR[name](*ops)
        res = np.dtype(np.bool_) if name in _NEEDS_CAST_RESULT else dt
        return cast(expr, res, out.dtype)

    # ------------------------------------------------------------------ loop nests
    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def nest(self, shape: tuple[int, ...], depth: int, order: list[int] | None = None
             ) -> tuple[list[str], int]:
        """Open loops over shape (axes in `order`, outermost first); returns the index
        names (by axis) and the depth inside."""
        order = list(range(len(shape))) if order is None else order
        idx = ["0"] * len(shape)
        for ax in order:
            if shape[ax] != 1:
                idx[ax] = self.fresh("i")
                self.emit(depth, f"for {idx[ax]} in range({shape[ax]}):")
                depth += 1
        return idx, depth

    def storage(self, v: Var, idx: list[str]) -> list[str]:
        """idx (logical) in v's storage order (materialized values choose their layout)."""
        perm = self.perm.get(v)
        return idx if perm is None else [idx[p] for p in perm]

    def alloc(self, v: Var, fill: str | None = None, perm: tuple[int, ...] | None = None
              ) -> str:
        name = self.fresh("t")
        self.names[v] = name
        self.kind[v] = "arr"
        a = v.aval
        if perm is not None and list(perm) != sorted(perm):
            self.perm[v] = perm
        if a.ndim == 0:
            return name
        shape = tuple(a.shape[p] for p in perm) if perm is not None else a.shape
        row = self.rows.get(v)
        if row is not None and fill is None and v not in self.perm:  # (a loop's stacked y)
            self.in_rows.add(v)
            self.emit(1, f"{name} = {row}.reshape({shape})")
            return name
        # (np.zeros is a memset; numba's np.full fills element by element: 16K cost 20 us)
        make = "np.empty" if fill is None else "np.zeros" if fill == "0.0" else "np.full"
        extra = "" if fill in (None, "0.0") else f", {fill}"
        self.emit(1, f"{name} = {make}({shape}{extra}, np.{a.dtype.name})")
        return name

    def store(self, v: Var, idx: list[str]) -> str:
        if v.aval.ndim == 0:
            return self.names[v]
        return f"{self.names[v]}[{', '.join(self.storage(v, idx))}]"

    def last_axis(self, a: Atom) -> int | None:
        """The logical axis along which a's elements are adjacent in memory (None: unknown
        or none). Inputs are taken to be C-contiguous."""
        shape = a.aval.shape
        if isinstance(a, Const) or self.kind.get(a) in ("in", "inline"):
            order: tuple[int, ...] = tuple(range(len(shape)))
        elif self.kind.get(a) == "arr":
            order = self.perm.get(a, tuple(range(len(shape))))
        elif self.kind.get(a) == "view" and self.eqn[a].prim.name in ("transpose", "relayout"):
            src = self.last_axis(self.eqn[a].inputs[0])
            perm = self.eqn[a].params["perm"]
            return None if src is None else perm.index(src)
        else:
            return None
        big = [k for k in order if shape[k] != 1]
        return big[-1] if big else None

    def materialize_elementwise(self, e: Eqn) -> None:
        self.alloc(e.out)
        idx, d = self.nest(e.out.aval.shape, 1)
        self.emit(d, f"{self.store(e.out, idx)} = {self.scalar_expr(e, idx)}")

    def copy_out(self, v: Var) -> str:
        """A fresh array holding view or inline value v (a kernel result)."""
        tmp = Var(v.aval)
        if v in self.rows:
            self.rows[tmp] = self.rows[v]
        self.alloc(tmp)
        if tmp in self.in_rows:
            self.in_rows.add(v)
        idx, d = self.nest(v.aval.shape, 1)
        self.emit(d, f"{self.store(tmp, idx)} = {self.read(v, idx)}")
        return self.names[tmp]

    def reduction(self, e: Eqn) -> None:
        x, out = e.inputs[0], e.out
        axes = set(e.params["axes"])
        shape = x.aval.shape
        kept = [k for k in range(len(shape)) if k not in axes]
        dt = out.aval.dtype
        op = e.prim.name[len("reduce_"):]
        init = {"sum": "0.0", "max": "-np.inf", "min": "np.inf"}[op]
        trailing = all(k < min(axes) for k in kept) if axes else True
        if trailing:  # every reduced axis inside the kept ones: a scalar accumulator
            self.alloc(out)
            oidx, d = self.nest(shape, 1, kept)
            acc = self.fresh("s")
            self.emit(d, f"{acc} = {init if op != 'sum' else '0.0'}")
            idx, d2 = self.nest(shape, d, sorted(axes))
            for k in kept:
                idx[k] = oidx[k]
        else:  # accumulate into the output, reading x in its memory order
            self.alloc(out, init)
            idx, d2 = self.nest(shape, 1)
            acc = self.store(out, [idx[k] for k in kept])
        v = self.fresh("r")
        self.emit(d2, f"{v} = {self.read(x, idx)}")
        if op == "sum":
            self.emit(d2, f"{acc} += {v}")
        else:  # NaN propagates, as in np.max/np.min
            cmp = ">" if op == "max" else "<"
            self.emit(d2, f"if {v} {cmp} {acc} or {v} != {v}:")
            self.emit(d2 + 1, f"if not {acc} != {acc}:")
            self.emit(d2 + 2, f"{acc} = {v}")
        if trailing:
            self.emit(d, f"{self.store(out, [oidx[k] for k in kept])} = "
                      f"{cast(acc, np.dtype(np.float64), dt)}")

    def slices(self, e: Eqn) -> None:
        """softmax, softmax_vjp and logsumexp: passes along one axis per slice."""
        name, out, axis = e.prim.name, e.out.aval, e.params["axis"]
        shape = _broadcast_shape([a.aval.shape for a in e.inputs])
        dt = out.dtype
        self.alloc(e.out)
        outer = [k for k in range(len(shape)) if k != axis]
        oidx, d = self.nest(shape, 1, outer)
        n = shape[axis]

        def along(depth: int) -> tuple[list[str], int]:
            j = self.fresh("j")
            self.emit(depth, f"for {j} in range({n}):")
            idx = list(oidx)
            idx[axis] = j
            return idx, depth + 1

        def rd(a: Atom, idx: list[str]) -> str:
            return self.read(a, bidx(a.aval.shape, shape, idx), dt)
        s = self.fresh("s")
        if name == "softmax_vjp":
            g, p = e.inputs
            self.emit(d, f"{s} = 0.0")
            idx, d2 = along(d)
            self.emit(d2, f"{s} += {rd(g, idx)} * {rd(p, idx)}")
            self.emit(d, f"{s}c = {cast(s, np.dtype(np.float64), dt)}")
            idx, d2 = along(d)
            pv = self.fresh("p")
            self.emit(d2, f"{pv} = {rd(p, idx)}")
            self.emit(d2, f"{self.store(e.out, idx)} = {rd(g, idx)} * {pv} - {pv} * {s}c")
            return
        x = e.inputs[0]
        m = self.fresh("m")
        self.emit(d, f"{m} = -np.inf")
        idx, d2 = along(d)
        v = self.fresh("r")
        self.emit(d2, f"{v} = {rd(x, idx)}")
        self.emit(d2, f"if ({v} > {m} or {v} != {v}) and not {m} != {m}:")
        self.emit(d2 + 1, f"{m} = {v}")
        if name == "logsumexp":
            self.emit(d, f"if not np.isfinite({m}):")
            self.emit(d + 1, f"{m} = 0.0")
        self.emit(d, f"{m}c = {cast(m, np.dtype(np.float64), dt)}")
        self.emit(d, f"{s} = 0.0")
        idx, d2 = along(d)
        if name == "logsumexp":
            self.emit(d2, f"{s} += np.exp({rd(x, idx)} - {m}c)")
            self.emit(d, f"{self.store(e.out, oidx[:axis] + oidx[axis + 1:])} = "
                      f"{cast(f'np.log({cast(s, np.dtype(np.float64), dt)}) + {m}c', dt, dt)}")
            return
        ev = self.fresh("r")
        self.emit(d2, f"{ev} = np.exp({rd(x, idx)} - {m}c)")
        self.emit(d2, f"{self.store(e.out, idx)} = {ev}")
        self.emit(d2, f"{s} += {ev}")
        self.emit(d, f"{s}c = {cast(s, np.dtype(np.float64), dt)}")
        idx, d2 = along(d)
        self.emit(d2, f"{self.store(e.out, idx)} /= {s}c")

    def contraction(self, e: Eqn) -> None:
        """A loop over every letter; the innermost one chosen so that the operands and the
        accumulator are contiguous along it (SIMD), the output stored in the order that
        makes it so (its readers index through that order)."""
        if self.dot(e):
            return
        name, out = e.prim.name, e.out.aval
        dt = out.dtype
        if name == "norm":
            s, t = e.params["spec"].split("->")
            ins, outl = [s, s], t
            ops = [e.inputs[0], e.inputs[0]]
        else:
            ins, outl = letters(e.params["spec"])  # type: ignore[misc]
            ops = list(e.inputs[:len(ins)])
        size: dict[str, int] = {}
        for s_, a in zip(ins, ops):
            size.update(zip(s_, a.aval.shape))
        inner = self.innermost(ins, outl, ops, size)
        rest_out = [c for c in outl if c != inner]
        summed = [c for c in dict.fromkeys("".join(ins)) if c not in outl and c != inner]
        order = rest_out + summed + ([inner] if inner else [])
        scalar_acc = inner is None or inner not in outl
        var = {c: (self.fresh("i") if size[c] != 1 else "0") for c in order}
        unroll = not scalar_acc and size[inner] <= UNROLL and \
            math.prod(size.values()) >= UNROLL_MACS  # type: ignore[index]
        if unroll:  # the inner letter's loop is written out below, not opened
            order = order[:-1]

        def product() -> str:
            return " * ".join(self.read(a, [var[c] for c in s_], dt) for s_, a in zip(ins, ops))
        prod = product()
        oidx = [var[c] for c in outl]
        if scalar_acc:
            self.alloc(e.out)
            acc = self.fresh("s")
        else:  # stored with the innermost letter last
            perm = tuple(outl.index(c) for c in rest_out + [inner])  # type: ignore[list-item]
            self.alloc(e.out, "0.0", perm)
            acc = self.store(e.out, oidx)
        d = 1
        for k, c in enumerate(order):
            if scalar_acc and k == len(rest_out):
                self.emit(d, f"{acc} = {literal(np.array(0.0), dt)}")
            if size[c] != 1:
                self.emit(d, f"for {var[c]} in range({size[c]}):")
                d += 1
        if scalar_acc and len(rest_out) == len(order):
            self.emit(d, f"{acc} = {literal(np.array(0.0), dt)}")
        if unroll:
            self.unrolled(e.out, outl, inner, size[inner], var, product, d)  # type: ignore[arg-type]
        else:
            self.emit(d, f"{acc} += {prod}")
        finish = self.finisher(e, outl)
        if scalar_acc:
            d = 1 + sum(size[c] != 1 for c in rest_out)
            self.emit(d, f"{self.store(e.out, oidx)} = {finish(acc, oidx)}")
        elif name != "einsum":
            perm = self.perm.get(e.out, tuple(range(out.ndim)))
            idx, d = self.nest(out.shape, 1, list(perm))
            ref = self.store(e.out, idx)
            self.emit(d, f"{ref} = {finish(ref, idx)}")

    def unrolled(self, out: Var, outl: str, inner: str, n: int, var: dict[str, str],
                 product: Callable[[], str], d: int) -> None:
        """The accumulation along output letter `inner` written out: every product first,
        then the n adds into the output. LLVM's SLP vectorizer (cache.py turns it on) makes
        them vector loads, multiplies and one vector add and store: a loop of n (16, say) is
        fully unrolled before the loop vectorizer runs, and stores to the output interleaved
        with the loads of the operands would keep it scalar (numba's arrays may alias)."""
        self.emit(d, f"{UNROLLED} (SLP-vectorized)")
        names = []
        for j in range(n):
            var[inner] = str(j)
            names.append(self.fresh("p"))
            self.emit(d, f"{names[-1]} = {product()}")
        for j, nm in enumerate(names):
            var[inner] = str(j)
            self.emit(d, f"{self.store(out, [var[c] for c in outl])} += {nm}")

    def innermost(self, ins: list[str], outl: str, ops: list[Atom], size: dict[str, int]
                  ) -> str | None:
        """The letter to loop over innermost: the fewest elements read with a stride along
        it (operands whose memory runs along another axis), then the longest, then an
        output letter (no reassociation needed)."""
        lasts = [self.last_axis(a) for a in ops]

        def strided(c: str) -> int:
            return sum(a.aval.size for s_, a, la in zip(ins, ops, lasts)
                       if c in s_ and (la is None or s_[la] != c))
        cands = [c for c in dict.fromkeys("".join(ins)) if size[c] > 1]
        if not cands:
            return None
        return min(cands, key=lambda c: (strided(c), -min(size[c], 64), c not in outl))

    def finisher(self, e: Eqn, outl: str) -> Callable[[str, list[str]], str]:
        """What a contraction's accumulated value becomes (sqrt for norm, + c for muladd)."""
        dt = e.out.aval.dtype
        if e.prim.name == "norm":
            return lambda acc, idx: f"np.sqrt({acc})"
        if e.prim.name == "muladd":
            c = e.inputs[2]
            return lambda acc, idx: \
                f"{acc} + {self.read(c, bidx(c.aval.shape, e.out.aval.shape, idx), dt)}"
        return lambda acc, idx: acc

    # ------------------------------------------------------------------ the kernel
    def inlinable(self, e: Eqn) -> bool:
        """An elementwise value read once per element by its only consumer."""
        v = e.out
        if v in self.live_out or self.uses.get(v, 0) != 1:
            return False
        c = self.consumer[v]
        name = c.prim.name
        if name in SCALAR or name in ("cast", "logistic"):
            return c.out.aval.size == v.aval.size
        if name in REDUCTIONS:
            return True
        if name in BLOCKS or name == "segment_sum":  # (each operand element read once)
            return True
        if name in WRITES:  # the base read once per element; the value once per region's
            k = c.inputs.index(v)
            return v.aval.size == (c.out.aval.size if k == 0 else
                                   math.prod(index_shape(c.inputs[0].aval.shape,
                                                         c.params["idx"])))
        if name in ("einsum", "muladd") and c.inputs.index(v) < 2:
            ins, _ = letters(c.params["spec"])  # type: ignore[misc]
            size: dict[str, int] = {}
            for s_, a in zip(ins, c.inputs):
                size.update(zip(s_, a.aval.shape))
            return math.prod(size.values()) == v.aval.size
        return False

    def make(self) -> tuple[str, list[Atom], list[Var]]:
        for e in self.region.eqns:
            for a in e.inputs:
                if isinstance(a, Const) or a not in self.kind:
                    self.ref_input(a)
            name = e.prim.name
            self.eqn[e.out] = e
            if name in VIEWS:
                self.kind[e.out] = "view"
            elif name in SCALAR or name in ("cast", "logistic"):
                if self.inlinable(e):
                    self.kind[e.out] = "inline"
                else:
                    self.materialize_elementwise(e)
            elif name in REDUCTIONS:
                self.reduction(e)
            elif name in SLICES:
                self.slices(e)
            elif name in CONTRACTIONS:
                self.contraction(e)
            elif name in WRITES:
                self.write(e)
            elif name in BLOCKS:
                (self.concatenate if name == "concatenate" else self.stack)(e)
            elif name in STATIC_GATHERS:
                self.static_gather(e)
            else:
                raise AssertionError(f"not fusible: {name}")
        outs = [e.out for e in self.region.eqns if e.out in self.live_out]
        rets = [self.names[v] if self.kind[v] == "arr" else self.copy_out(v) for v in outs]
        params = ", ".join([f"a{k}" for k in range(len(self.args))] +
                           (["out_", "t_"] if self.rows else []))  # (rows: loop.py)
        self.short = _innermost_trips(self.lines) <= UNROLL
        body = "\n".join(self.lines)
        src = (f"def {self.name}({params}):\n{body}\n"
               f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})\n")
        return src, self.args, outs


def _innermost_trips(lines: list[str]) -> int:
    """The longest trip count of an innermost loop in the kernel body `lines` (0: none; a loop
    around an unrolled accumulation counts 0: the SLP vectorizer handles it)."""
    longest = 0
    open_: list[tuple[int, int]] = []  # (indent, trips) of the loops entered
    inner = False
    for ln in lines:
        ind = len(ln) - len(ln.lstrip())
        while open_ and ind <= open_[-1][0]:
            n = open_.pop()[1]
            if inner:
                longest = max(longest, n)
            inner = False
        if ln.lstrip().startswith("for "):
            open_.append((ind, int(ln[ln.rindex("range(") + 6:ln.rindex(")")])))
            inner = True
        elif ln.lstrip().startswith(UNROLLED) and open_:  # its loop needs no loop vectorizer
            open_[-1] = (open_[-1][0], 0)
    if open_ and inner:
        longest = max(longest, open_[-1][1])
    return longest


def _broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))
