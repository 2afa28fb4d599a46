"""Recording: a `Builder` is a graph under construction. `emit` appends one equation per traced
operation (the hottest path of tracing: it allocates little), hash-conses repeated operations
over a window of recent equations, and enforces the operation limit VECGRAD_MAX_EQNS.

The user's handles on the values it records (`tracing.Tracer`) live a layer above.
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from .errors import _AT, TraceError, src_from, user_src
from .ir import Atom, Aval, Const, Eqn, Graph, Params, Primitive, Src, Var, new_aval, new_eqn
from .notes import Recorded

if TYPE_CHECKING:
    from .tracing import Tracer

CONTENTS_MAX = 1 << 17  # bytes: larger captured arrays are told apart by identity only
_current: contextvars.ContextVar[Builder | None] = contextvars.ContextVar("vecgrad_builder",
                                                                            default=None)


def _changed(copy: np.ndarray, x: np.ndarray | np.generic) -> bool:
    """Whether the user changed a captured array in place since it was copied (`buf =
    np.sin(c); y = buf + x; buf[0] = 2; y * buf` uses both values, as NumPy does). Arrays of
    up to 2^16 elements are compared whole; larger ones at up to 4096 evenly spaced elements
    (a change elsewhere is not seen: a known gap, kept so that big captured data is not
    compared in full at every use)."""
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        return False
    if x.size <= 1 << 16:
        return copy.tobytes() != x.tobytes()
    step = x.size // 4096 + 1
    return copy.reshape(-1)[::step].tobytes() != x.reshape(-1)[::step].tobytes()


class Builder:
    """A graph under construction."""

    def __init__(self, inputs: Sequence[Var] = (), hash_cons: bool = True,
                 parent: Builder | None = None):
        self.inputs = list(inputs)
        self.hash_cons = hash_cons
        # A trace of a function called inside another trace (a nested transformation): values
        # of the enclosing traces that it uses become extra inputs, in `closure` order
        self.parent = parent
        self.closure: list[tuple[Tracer, Var]] = []  # (the enclosing trace's value, input)
        self._lifted: dict[Var, Tracer] = {}  # an enclosing trace's value -> its input here
        self.concrete: list[Atom] = []  # values whose concrete value the function asked for
        self.eqns: list[Eqn] = []
        self.src: Src | None = None  # set by transformations: the source line being derived
        self.at = None  # the frame that called the user's entry into vecgrad (see `entry`)
        self.limit = _limit()
        self._check = min(MEMO_WINDOW, self.limit)  # the next checkpoint (see _checkpoint)
        self._captured: dict[int, tuple] = {}  # id(array) -> (array, its constant)
        self._contents: dict[tuple, Const] = {}  # (dtype, shape, bytes) -> its constant
        # hash-consing: (prim, params, inputs) -> result, for the last MEMO_WINDOW to
        # 2 * MEMO_WINDOW equations recorded (the newer ones in _memo)
        self._memo: dict[tuple, Var] = {}
        self._older: dict[tuple, Var] = {}
        # per trace, shared by its equations: params_key -> (Params, a small int standing for
        # them in the keys below), for the parameters used in the last MEMO_WINDOW to
        # 2 * MEMO_WINDOW equations (two generations, as the memo: an id outlives every memo
        # entry keyed by it), and (prim, params id, operand avals) -> the result's aval (shape
        # rules run once per distinct operation)
        self._params: dict[tuple, tuple[Params, int]] = {}
        self._params_older: dict[tuple, tuple[Params, int]] = {}
        self._pid = 0  # the next params id
        self._avals: dict[tuple, Aval] = {}
        self._pool: dict[Aval, Aval] = {}
        self.recorded = 0  # operations recorded, repeats included (what an eager tape runs)
        # tables that the layers above keep for the length of this trace, by name (numpy's
        # reads and writes at traced indices, the shared constants of uniform buffers). They
        # hold tracers, which hold this builder: a cycle, which would leave the whole trace
        # (its equations, values and parameters, a million objects for a long loop) to the
        # cyclic GC; they are dropped when the trace ends (`__exit__`)
        self.scratch: dict[str, dict] = {}

    def emit(self, prim: Primitive, atoms: Sequence[Atom], params: dict,
             shape: Sequence[int] | None = None) -> Var:
        """Record `prim(*atoms)`, or return the value of an identical earlier operation: the
        trace is built hash-consed, which is common-subexpression elimination as it goes (a
        loop-invariant computation repeated in every iteration is recorded once).

        This runs once per traced operation, so it allocates little: equal parameters, avals
        and source lines are shared between equations, and shape rules are memoized. A caller
        that has the result's shape at hand, its dtype the first operand's, passes it as
        `shape` (what `prim`'s shape rule would say: `x[i]` at a new i, whose parameters are
        new each time, skips the rule)."""
        self.recorded += 1
        if params:  # (params_key, inline: this is the hottest path)
            pk = tuple(params.items())
            pk = pk[0] if len(pk) == 1 else tuple(sorted(pk))
        else:
            pk = ()
        # the parameters' shared Params and a small int standing for them in the keys below
        # (a parameter tuple is hashed once here, not once per table)
        pp = self._params.get(pk)
        fresh = False  # (parameters new to this trace: no shape rule ran with them)
        if pp is None:
            pp = self._params_older.get(pk) if self._params_older else None
            if pp is None:
                pp = (Params.of(params), self._pid)
                self._pid += 1
                fresh = True
            self._params[pk] = pp
        ps, pid = pp
        ins = tuple(atoms)
        n = len(ins)  # (one and two operands, the most common, without a loop)
        if n == 2:
            a0, a1 = ins
            plain = a0.__class__ is Var and a1.__class__ is Var
        elif n == 1:
            a0 = ins[0]
            plain = a0.__class__ is Var
        else:
            plain = all(a.__class__ is Var for a in ins)
        # (constants are keyed by their contents)
        key = (prim, pid, ins if plain else
               tuple([x if x.__class__ is Var else x.key() for x in ins]))
        if self.hash_cons and not fresh:  # (new parameters: no earlier operation had them)
            hit = self._memo.get(key)
            if hit is None and self._older:
                hit = self._older.get(key)
                if hit is not None:  # (still in use: kept past the next checkpoint, so a
                    self._memo[key] = hit  # loop invariant stays one value in any trace)
            if hit is not None:
                return hit
        if len(self.eqns) >= self._check:
            self._checkpoint()
            self._params[pk] = pp  # (the memo entry made below is keyed by its id)
        avals = (a0.aval, a1.aval) if n == 2 else (a0.aval,) if n == 1 else \
            tuple([a.aval for a in ins])
        akey = (prim, pid, avals)
        aval = None if fresh else self._avals.get(akey)
        if aval is None:
            if shape is None:
                aval = prim.shape_rule(*avals, **params)
            else:  # (the caller's shape rule: cheap, and at new parameters, `x[i]` at a new
                aval = new_aval((tuple(shape), avals[0].dtype))  # i, not worth a memo entry)
            aval = self._pool.setdefault(aval, aval)  # (equal avals: one object)
            if shape is None or not fresh:
                if len(self._avals) >= 4096:  # (operations of distinct shapes or params:
                    self._avals.clear()  # bounded)
                self._avals[akey] = aval
        out = Var(aval)
        src = self.src
        if src is None:
            at = self.at
            if at is None:
                src = user_src(3)
            else:  # (the user's line at a position seen before, else found from `at` on)
                code = at.f_code
                hit = _AT.get((id(code), at.f_lasti))
                src = hit[1] if hit is not None and hit[0] is code else src_from(at)
        self.eqns.append(new_eqn((prim, ins, ps, out, src)))
        if self.hash_cons:
            self._memo[key] = out
        return out

    def _checkpoint(self) -> None:
        """Every MEMO_WINDOW equations, forget the older half of the hash-consing table and
        of the parameters' ids; at the operation limit, fail (naming the lines that ran
        most)."""
        n = len(self.eqns)
        if n >= self.limit:
            raise _too_large(self)
        self._older, self._memo = self._memo, {}
        self._params_older, self._params = self._params, {}
        self._check = min(n + MEMO_WINDOW, self.limit)

    def capture(self, x: np.ndarray | np.generic) -> Const:
        """A NumPy array used by the traced code becomes a constant holding its value at
        trace time (a copy: later changes to the array do not reach compiled code). Copied
        once per trace, however many operations use it."""
        hit = self._captured.get(id(x))
        if hit is None or hit[0] is not x or _changed(hit[1].value, x):
            hit = self._captured[id(x)] = (x, self._by_contents(x))
        return hit[1]

    def _by_contents(self, x: np.ndarray | np.generic) -> Const:
        """One constant for equal arrays of numbers up to CONTENTS_MAX bytes: a loop that makes
        the same table at each iteration (np.linspace, np.arange, a cast or copy of a global)
        reads one loop-invariant operand, not a copy per iteration that batching stacks. A
        NumPy scalar counts as a Python number does, one constant per capture: merged with an
        equal one, an entry of a table (3.0 at two charges' coordinates) made the terms that
        read them one value, whose irregular sharing batching then pays for."""
        if not x.ndim or x.nbytes > CONTENTS_MAX or x.dtype.kind not in "biufc":
            return Const(np.array(x, copy=True))
        key = (x.dtype.str, x.shape, x.tobytes())
        c = self._contents.get(key)
        if c is None:
            c = self._contents[key] = Const(np.array(x, copy=True))
        return c

    def inside(self, b: Builder) -> bool:
        """Whether this trace is `b` or is nested inside it."""
        t: Builder | None = self
        while t is not None and t is not b:
            t = t.parent
        return t is b

    def build(self, outputs: Sequence[Atom], notes: tuple = ()) -> Graph:
        if self.recorded > len(self.eqns):
            notes = notes + (Recorded(self.recorded),)
        return Graph(tuple(self.inputs), tuple(self.eqns), tuple(outputs), notes)

    def __enter__(self) -> Self:
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)
        self.scratch.clear()


def entry(method: Callable) -> Callable:
    """`method` of a traced array (an operator, `x[i] = v`, `x.sum()`) as the user's way into
    vecgrad: the frame that called it is noted on its trace (`Builder.at`) while it runs, and
    the equations it records take the user's line from that frame (one look-up), where each
    would walk up over vecgrad's frames to find it. The outermost such call is noted (the
    frame that called it is the user's, or vecgrad's own where the user called a function
    that is no entry: the line is then the first user frame above it, as a walk finds), so
    only methods that never call back into user code are entries: a user line below one
    would not be seen."""
    getframe = sys._getframe

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        b = self._b
        if b.at is not None:
            return method(self, *args, **kwargs)
        b.at = getframe(1)
        try:
            return method(self, *args, **kwargs)
        finally:
            b.at = None

    @functools.wraps(method)
    def call2(self, other):  # (binary operators: no argument tuples)
        b = self._b
        if b.at is not None:
            return method(self, other)
        b.at = getframe(1)
        try:
            return method(self, other)
        finally:
            b.at = None
    code = method.__code__
    two = code.co_argcount == 2 and not method.__defaults__ and not code.co_kwonlyargcount \
        and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    return call2 if two else call


def noting(b: Builder | None, frame: Any, fn: Callable, *args: Any) -> Any:
    """`fn(*args)` as an entry of the user's into trace `b` (see `entry`) whose caller is
    `frame`, unless one is noted already."""
    if b is None or b.at is not None:
        return fn(*args)
    b.at = frame
    try:
        return fn(*args)
    finally:
        b.at = None


# Hash-consing looks back this many equations at least (twice as many at most): a repeated
# loop-invariant computation is found again within an iteration or a few, and the table of a
# long trace stays bounded.
MEMO_WINDOW = 1 << 17
MAX_EQNS = 1_000_000  # the default of VECGRAD_MAX_EQNS


def _limit() -> int:
    """The operation limit: the environment variable VECGRAD_MAX_EQNS, default MAX_EQNS."""
    try:
        return max(1, int(os.environ.get("VECGRAD_MAX_EQNS", MAX_EQNS)))
    except ValueError:
        return MAX_EQNS


def _too_large(b: Builder) -> TraceError:
    counts = Counter(e.src for e in b.eqns)
    lines = [f"{s}: {n:,}" if s else f"(no source line): {n:,}" for s, n in counts.most_common(5)]
    more = f", and {len(counts) - 5} more lines" if len(counts) > 5 else ""
    return TraceError(
        f"the trace exceeded {b.limit:,} operations: loops are unrolled while tracing, and "
        f"these lines ran most (operations recorded per line, so far): {'; '.join(lines)}{more}. "
        "Vectorize the innermost loop by hand (or pass its data as one array), trace a smaller "
        "problem, or raise the limit with the environment variable VECGRAD_MAX_EQNS (each "
        "operation takes about 0.5 kB while tracing)")


def current_builder() -> Builder | None:
    """The trace being recorded in this context, if any."""
    return _current.get()
