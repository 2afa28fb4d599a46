"""Random numbers drawn while tracing are an error, never a silently frozen sample.

vecgrad runs a function once per input signature and compiles what it did. A sample drawn
from a random state that lives outside the function (NumPy's global state behind
`np.random.*`, Python's `random.*`, a `Generator` or `RandomState` in a global, a closure, a
default, a static argument or the attributes of a bound method's object) would become a
constant of the compiled code: the same noise on every call, and the state would not
advance on later calls as it does in NumPy. So `checked_trace` fingerprints every such state
before the trace and compares after; if one changed, it traces once more under
`sys.setprofile` to find the user's line, and raises `RandomStateError`.

A generator created inside the function with a fixed seed (`np.random.default_rng(0)`,
`np.random.RandomState(0)`, `random.Random(0)`) gives the same sample on every call in NumPy
too: compiling it in is exact, and allowed. One created without a seed (or seeded again
without one) draws fresh OS entropy on every call; that draw is detected and is an error as
well. NumPy's entropy comes from SeedSequence's source (`bit_generator.randbits`), Python's
from `random.Random.seed(None)` and, for `random.SystemRandom`, `random._urandom`: each is
wrapped to note a draw that happens during a trace. `RandomState(seed)` draws entropy too (it
builds an unseeded MT19937, then seeds it): such a draw, made while a bit generator is being
constructed (which its lock's creation marks), counts only if the entropy outlives the call
that made it (`_Entropy`).

Fingerprints are cheap (about a microsecond per state; no work per traced operation): the
raw C state of Mersenne-Twister states through NumPy's documented `BitGenerator.ctypes`,
with the legacy Gaussian cache and Python's `random` state read at offsets found and
verified once (the exact `get_state()` is the fallback when verification fails).
"""
from __future__ import annotations

import contextlib
import contextvars
import ctypes
import functools
import random as _random
import struct
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np
import numpy.random.bit_generator as _bitgen_mod

from .errors import RandomStateError, Src, _is_internal, _where

T = TypeVar("T")

_RNG_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
              _random.Random)


# ----------------------------------------------------------------------- fingerprints

_MT_STATE_BYTES = 624 * 4 + 4  # mt19937_state: uint32 key[624]; int pos


@functools.cache
def _gauss_offset() -> int | None:
    """Where a RandomState keeps (has_gauss, gauss) in its object, found by writing a marker
    with set_state and verified both ways; None if the layout is not the expected one."""
    rs = np.random.RandomState(0)
    key = np.arange(624, dtype=np.uint32)
    marker = 1.2345678912345e-300
    rs.set_state(("MT19937", key, 5, 1, marker))
    size = type(rs).__basicsize__
    g = ctypes.string_at(id(rs), size).find(struct.pack("d", marker))
    if g < 8:
        return None
    ok = ctypes.string_at(id(rs) + g - 8, 4) == struct.pack("i", 1)
    rs.set_state(("MT19937", key, 5, 0, 0.0))
    ok = ok and ctypes.string_at(id(rs) + g - 8, 16) == struct.pack("i", 0) + \
        ctypes.string_at(id(rs) + g - 4, 4) + struct.pack("d", 0.0)
    return g - 8 if ok else None


@functools.cache
def _pyrandom_offset() -> int | None:
    """Where a random.Random keeps (int index; uint32 state[624]), verified with getstate."""
    r = _random.Random(1234)
    off = object.__basicsize__
    state = r.getstate()[1]
    raw = ctypes.string_at(id(r) + off, 4 + 624 * 4)
    ok = struct.unpack("i", raw[:4])[0] == state[-1] and \
        struct.unpack("624I", raw[4:]) == state[:-1]
    return off if ok else None


def _freeze(state: Any) -> Any:
    if isinstance(state, dict):
        return tuple((k, _freeze(v)) for k, v in sorted(state.items()))
    if isinstance(state, np.ndarray):
        return state.tobytes()
    return state


def _bitgen_fingerprint(bg: np.random.BitGenerator) -> Any:
    if isinstance(bg, np.random.MT19937):
        return ctypes.string_at(bg.ctypes.state_address, _MT_STATE_BYTES)
    return _freeze(bg.state)


def fingerprint(obj: Any) -> Any:
    """A value that changes whenever `obj` (a random state) draws."""
    if isinstance(obj, np.random.Generator):
        return _bitgen_fingerprint(obj.bit_generator)
    if isinstance(obj, np.random.BitGenerator):
        return _bitgen_fingerprint(obj)
    if isinstance(obj, np.random.RandomState):
        bg, off = getattr(obj, "_bit_generator", None), _gauss_offset()
        if isinstance(bg, np.random.MT19937) and off is not None:
            return _bitgen_fingerprint(bg) + ctypes.string_at(id(obj) + off, 16)
        return _freeze(obj.get_state(legacy=False))
    off = _pyrandom_offset()
    if type(obj) is _random.Random and off is not None:
        return ctypes.string_at(id(obj) + off, 4 + 624 * 4), obj.gauss_next
    return obj.getstate()


# ---------------------------------------------------------------- what the function sees

def _named(obj: Any, where: str, out: dict) -> None:
    if isinstance(obj, _RNG_TYPES) and not isinstance(obj, _random.SystemRandom):
        out.setdefault(id(obj), (obj, where))


def _scan_values(values: Any, where: str, out: dict, depth: int, seen: set) -> None:
    for v in values:
        if isinstance(v, _RNG_TYPES):
            _named(v, where, out)
        elif callable(v):
            _scan_callable(v, out, depth + 1, seen)


def _scan_callable(f: Any, out: dict, depth: int = 0, seen: set | None = None) -> None:
    """Random states reachable from `f`: the globals its code names (and attributes of
    modules it names), its closure cells and defaults, a partial's arguments, a bound
    method's object; recursing into the functions found (a few levels deep)."""
    seen = set() if seen is None else seen
    if depth > 3 or id(f) in seen:
        return
    seen.add(id(f))
    if isinstance(f, functools.partial):
        _scan_values([*f.args, *f.keywords.values()], "an argument of a partial", out, depth,
                     seen)
        return _scan_callable(f.func, out, depth, seen)
    if isinstance(f, types.MethodType):
        _scan_values(list(getattr(f.__self__, "__dict__", {}).values()),
                     f"an attribute of {type(f.__self__).__name__}", out, depth, seen)
        return _scan_callable(f.__func__, out, depth, seen)
    if not isinstance(f, types.FunctionType):
        if hasattr(f, "__dict__") and not isinstance(f, (type, types.ModuleType,
                                                         types.BuiltinFunctionType)):
            _scan_values(list(vars(f).values()), f"an attribute of {type(f).__name__}", out,
                         depth, seen)
            call = type(f).__call__ if callable(f) else None
            if isinstance(call, types.FunctionType):
                _scan_callable(call, out, depth, seen)
        return None
    name = f.__qualname__
    names = _code_names(f.__code__)
    g = f.__globals__
    modules = []
    for n in names:
        v = g.get(n)
        if isinstance(v, types.ModuleType):
            modules.append(v)
        elif v is not None:
            _scan_values([v], f"the global `{n}` of {name}", out, depth, seen)
    for m in modules:
        if m.__name__.split(".")[0] in ("numpy", "random", "vecgrad"):
            continue
        _scan_values([getattr(m, n) for n in names if hasattr(m, n)],
                     f"an attribute of module {m.__name__}", out, depth, seen)
    for n, c in zip(f.__code__.co_freevars, f.__closure__ or ()):
        try:
            _scan_values([c.cell_contents], f"the variable `{n}` closed over by {name}", out,
                         depth, seen)
        except ValueError:  # an empty cell
            pass
    _scan_values([*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values()],
                 f"a default argument of {name}", out, depth, seen)
    return None


@functools.lru_cache(maxsize=1024)
def _code_names(code: types.CodeType) -> frozenset[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return frozenset(names)


def _states(fun: Callable, statics: Any) -> dict[int, tuple[Any, str]]:
    out: dict[int, tuple[Any, str]] = {}
    _named(np.random.mtrand._rand, "NumPy's global random state (np.random.*)", out)
    _named(_random._inst, "Python's global random state (random.*)", out)
    _scan_callable(fun, out)
    for v in _leaves(statics):
        _named(v, "a static argument", out)
    return out


def _leaves(x: Any) -> Iterator[Any]:
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _leaves(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    else:
        yield x


# -------------------------------------------------------------- fresh entropy while tracing

class _Draws:
    """Fresh entropy drawn during one trace: the user's lines that drew it, and whether each
    draw was thrown away by the call that made it."""

    __slots__ = ("building", "events")

    def __init__(self) -> None:
        self.events: list[_Event] = []
        self.building: tuple[int, int] | None = None  # (frame id, instruction) of the call
        # constructing a bit generator

    def unseeded(self) -> list[Src | None]:
        return [e.src for e in self.events if not e.discarded]


class _Event:
    __slots__ = ("discarded", "src")

    def __init__(self, src: Src | None):
        self.src = src
        self.discarded = False


class _Entropy(int):
    """The entropy of a bit generator constructed while tracing (an int, as SeedSequence
    expects). `np.random.RandomState(seed)` builds an unseeded MT19937 and then seeds it, which
    drops its SeedSequence, and this with it, before the constructing call returns; an
    unseeded generator keeps it as long as it lives. `__del__` tells the two apart."""

    __repr__ = int.__repr__

    def __del__(self) -> None:
        at = self.__dict__.get("_at")
        if at is None:
            return
        ev, fid, lasti = at
        with contextlib.suppress(ValueError):  # (no calling frame: nothing to record)
            f = sys._getframe(1)
            if id(f) == fid and f.f_lasti == lasti:
                ev.discarded = True


_DRAWS: contextvars.ContextVar[_Draws | None] = contextvars.ContextVar("vecgrad_entropy",
                                                                        default=None)
_RANDBITS = _bitgen_mod.randbits
_RLOCK = _bitgen_mod.RLock
_PY_SEED = _random.Random.seed
_URANDOM = _random._urandom


def _traced_rlock(*args: Any) -> Any:
    """BitGenerator.__init__ makes its lock first: a bit generator is being constructed by
    the calling line (its entropy, if it draws any, may be replaced by a legacy seed)."""
    d = _DRAWS.get()
    if d is not None:
        f = sys._getframe(1)
        d.building = (id(f), f.f_lasti)
    return _RLOCK(*args)


def _traced_randbits(n: int) -> int:
    """SeedSequence's entropy source (a generator is seeded from the OS): noted when it happens
    during a trace."""
    d = _DRAWS.get()
    if d is None:
        return _RANDBITS(n)
    f = sys._getframe(1)
    ev = _Event(_frame_src(f))
    d.events.append(ev)
    _DRAWS.set(None)  # (secrets.randbits draws through random._urandom: one event, not two)
    try:
        bits = _RANDBITS(n)
    finally:
        _DRAWS.set(d)
    if d.building != (id(f), f.f_lasti):
        return bits
    e = _Entropy(bits)
    e.__dict__["_at"] = (ev, id(f), f.f_lasti)
    return e


def _traced_seed(self: _random.Random, a: Any = None, version: int = 2) -> None:
    """random.Random.seed: seeding from the OS (no seed given) during a trace is noted."""
    d = _DRAWS.get()
    if a is None and d is not None:
        d.events.append(_Event(_frame_src(sys._getframe(1))))
    return _PY_SEED(self, a, version)


def _traced_urandom(n: int) -> bytes:
    """random.SystemRandom's source: every draw is fresh OS entropy."""
    d = _DRAWS.get()
    if d is not None:
        d.events.append(_Event(_frame_src(sys._getframe(1))))
    return _URANDOM(n)


_bitgen_mod.randbits = _traced_randbits
_bitgen_mod.RLock = _traced_rlock
_random.Random.seed = _traced_seed  # type: ignore[method-assign]
_random._urandom = _traced_urandom


# ------------------------------------------------------------------------------ the check

def checked_trace(fun: Callable, statics: Any, run: Callable[[], T]) -> T:
    """`run()` (a trace of `fun`), raising RandomStateError if it drew random numbers from a
    state outside the function or created an unseeded generator."""
    states = _states(fun, statics)
    before = {k: fingerprint(o) for k, (o, _) in states.items()}
    draws = _Draws()
    token = _DRAWS.set(draws)
    try:
        out = run()
    finally:
        _DRAWS.reset(token)
    drawn = [w for k, (o, w) in states.items() if fingerprint(o) != before[k]]
    fresh = draws.unseeded()
    if fresh:
        raise RandomStateError(
            f"a random generator without a seed was created (or seeded from the OS) while "
            f"tracing {_fun_name(fun)}{_where(fresh[0])}: NumPy and Python draw fresh OS "
            "entropy for it on every call. " + _ADVICE, fresh[0])
    if drawn:
        src = _locate(run, [states[k][0] for k, (o, w) in states.items() if w in drawn])
        raise RandomStateError(
            f"random numbers were drawn from {', '.join(drawn)} while tracing "
            f"{_fun_name(fun)}{_where(src)}: " + _ADVICE, src)
    return out


_ADVICE = ("vecgrad runs the function once per input signature and compiles what it did, so "
           "the sample would be frozen into the compiled code and reused on every call (and "
           "the random state would not advance on later calls, as it does in NumPy). Draw the "
           "noise outside and pass it as an argument (noise = rng.standard_normal(shape); "
           "f(x, noise)). A generator created inside the function with a fixed seed "
           "(np.random.default_rng(0)) is fine: NumPy gives the same sample on every call too")


def _fun_name(fun: Callable) -> str:
    return getattr(fun, "__qualname__", None) or type(fun).__name__


def _locate(run: Callable[[], Any], objs: list) -> Src | None:
    """Trace again under sys.settrace, comparing the states' fingerprints at every event: a
    change first seen at a user frame's line event happened on its previous line, at its
    return on its last line, and at any frame's call in the user's line that called it.
    (NumPy's random methods are compiled Cython, which no profiler event reports.)"""
    last = [fingerprint(o) for o in objs]
    hits: list[Src | None] = []
    prev: dict[Any, int] = {}

    def changed() -> bool:
        return [fingerprint(o) for o in objs] != last

    def local(frame: types.FrameType, event: str, arg: Any) -> Any:
        if hits:
            return None
        if event in ("line", "return"):
            if changed():
                line = prev.get(frame, frame.f_lineno) if event == "line" else frame.f_lineno
                hits.append(Src(frame.f_code.co_filename, line, frame.f_code.co_name))
                return None
            prev[frame] = frame.f_lineno
        return local

    def calls(frame: types.FrameType, event: str, arg: Any) -> Any:
        if hits:
            return None
        if changed():  # drawn by the line that made this call
            hits.append(_frame_src(frame.f_back))
            return None
        return local if _is_user(frame.f_code.co_filename) else None
    old = sys.gettrace()
    sys.settrace(calls)
    try:
        with contextlib.suppress(Exception):  # (it succeeded once; only the line matters)
            run()
    finally:
        sys.settrace(old)
    return hits[0] if hits else None


_RANDOM_PY = getattr(_random, "__file__", "")


def _is_user(fname: str) -> bool:
    """Not vecgrad, NumPy, random.py, or code generated from a string (NamedTuple's __new__)."""
    return not _is_internal(fname) and fname not in (_RANDOM_PY, "<string>")


def _frame_src(frame: types.FrameType | None) -> Src | None:
    """The innermost user frame from `frame` outwards."""
    while frame is not None:
        if _is_user(frame.f_code.co_filename):
            return Src(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None
