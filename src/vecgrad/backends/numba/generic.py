"""Size-generic kernel sources: a kernel's extents, offsets and constants as its arguments.

kernel.py and loop.py write every extent, offset and constant of a kernel as a literal: shapes
are static, so the generator stays simple and each source reads as the arithmetic it does.
But then every size of a program is a new source, hence a new numba compile of seconds (ode's
gradient: 3.5-6.3 s at each (n, s)). `abstract(source)` rewrites a finished module so that it
no longer names them: every integer literal above `kernel.UNROLL` and every float literal
other than a small whole number or 0.5 becomes a parameter, named by its value (equal values
share one name, numbered in order of first appearance), appended to every function of the
module and to every call between them. Two sizes of a program whose kernels differ only in
those values give one text, hence one cache file and one compile; the caller passes the
values (`Generic.values`) at each call.

The literals that stay are structure: integers up to UNROLL are the trip counts of the short
innermost loops LLVM unrolls for the SLP vectorizer, the constant positions of unrolled
accumulations, axes, steps and permutations (a size that crosses UNROLL there is another
source); 0, 1, 0.5 and the like are the generator's own constants (initial values,
logistic's halves). Small integers do become parameters where nothing depends on their being
constant: the shape of an allocation or reshape, and the trip count of a loop that holds
another loop (a stack of s steps of an ODE, s = 10 or 100, is one source). Correctness does
not depend on which literals are chosen: each name is bound, at every call, to the very value
it replaced in this size's source.
"""
from __future__ import annotations

import io
import math
import tokenize
from dataclasses import dataclass

from .kernel import UNROLL

# (ints past this stay literals: numba passes arguments as int64)
INT_LIMIT = 1 << 62
# False: sources keep every literal, one compile per size (the A/B of
# bench/gradbench/numba_sizes.py, which measures what this module saves and costs).
ENABLED = True


@dataclass(frozen=True)
class Generic:
    """A module source with its sizes and constants as parameters, and their values here."""

    source: str
    values: tuple[int | float, ...]

    def comment(self) -> str:
        """A line naming the values of this size (for vg.show)."""
        if not self.values:
            return ""
        return "# " + ", ".join(f"{n} = {v!r}" for n, v in zip(self.names(), self.values)) + "\n"

    def names(self) -> list[str]:
        return [_name(v, k) for k, v in enumerate(self.values)]


def _name(v: float, k: int) -> str:
    return f"{'n' if isinstance(v, int) else 'f'}{k}_"


def _parameter(text: str) -> int | float | None:
    """The value of NUMBER token `text` if it becomes a parameter, else None."""
    if text.isdigit():  # (the generator writes decimal integers only)
        v = int(text)
        return v if UNROLL < v < INT_LIMIT else None
    if any(c in text for c in "jJxXoObB_"):
        return None
    f = float(text)
    if not math.isfinite(f) or f == 0.5 or f.is_integer() and abs(f) <= UNROLL:
        return None
    return f


def _sized(toks: list[tokenize.TokenInfo], lines: list[str]) -> set[int]:
    """The indices of the integer tokens that are only sizes: in the shape argument of an
    allocation or a reshape, or the trip count of a loop around another loop."""
    outer = set()
    for r, ln in enumerate(lines):
        body = ln.lstrip()
        if body.startswith("for ") and "range(" in body:
            ind = len(ln) - len(body)
            for ln2 in lines[r + 1:]:
                b2 = ln2.lstrip()
                if b2 and len(ln2) - len(b2) <= ind:
                    break
                if b2.startswith("for "):
                    outer.add(r + 1)  # (token rows count from 1)
                    break
    out = set()
    for k, t in enumerate(toks):
        if t.type == tokenize.NAME and t.string in ("empty", "zeros", "full", "reshape") and \
                k and toks[k - 1].string == "." and toks[k + 1].string == "(":
            depth = 0
            for j in range(k + 1, len(toks)):
                s = toks[j].string
                depth += s in "([{" and toks[j].type == tokenize.OP
                depth -= s in ")]}" and toks[j].type == tokenize.OP
                if depth == 0 or depth == 1 and s == ",":
                    break
                if toks[j].type == tokenize.NUMBER:
                    out.add(j)
        elif t.type == tokenize.NAME and t.string == "range" and t.start[0] in outer:
            j = _closing(toks, k + 1)
            out.update(i for i in range(k + 2, j) if toks[i].type == tokenize.NUMBER)
    return out


def _closing(toks: list[tokenize.TokenInfo], k: int) -> int:
    """The index of the `)` matching the `(` at toks[k]."""
    depth = 0
    for j in range(k, len(toks)):
        s = toks[j].string
        if toks[j].type == tokenize.OP and s in "([{":
            depth += 1
        elif toks[j].type == tokenize.OP and s in ")]}":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced parentheses in a generated kernel")


def abstract(source: str) -> Generic:
    """`source` (a module of kernels) with its sizes and constants as trailing parameters of
    every function, and the values they take for this source."""
    if not ENABLED:
        return Generic(source, ())
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    index: dict[tuple[type, int | float], int] = {}
    values: list[int | float] = []
    edits: list[tuple[tuple[int, int], tuple[int, int], int | None]] = []  # (from, to, value #)
    sized = _sized(toks, source.splitlines())
    for k, t in enumerate(toks):
        if t.type == tokenize.NUMBER:
            v = _parameter(t.string)
            if v is None and k in sized and t.string.isdigit() and int(t.string) > 1:
                v = int(t.string)
            if v is not None:
                key = (type(v), v)
                if key not in index:
                    index[key] = len(values)
                    values.append(v)
                edits.append((t.start, t.end, index[key]))
    if not values:
        return Generic(source, ())
    names = [_name(v, k) for k, v in enumerate(values)]
    defs = {toks[k + 1].string for k, t in enumerate(toks[:-1])
            if t.type == tokenize.NAME and t.string == "def"}
    tail: list[tuple[tuple[int, int], str]] = []  # (where, text): the new trailing arguments
    for k, t in enumerate(toks[:-1]):
        if t.type == tokenize.NAME and t.string in defs and toks[k + 1].string == "(":
            j = _closing(toks, k + 1)
            empty = j == k + 2
            tail.append((toks[j].start, ("" if empty else ", ") + ", ".join(names)))
    lines = source.splitlines(keepends=True)
    repl = [(a, b, names[i]) for a, b, i in edits] + [(w, w, s) for w, s in tail]
    for (r0, c0), (r1, c1), text in sorted(repl, reverse=True):  # (back to front: positions hold)
        assert r0 == r1, "a generated number spans lines"
        ln = lines[r0 - 1]
        lines[r0 - 1] = ln[:c0] + text + ln[c1:]
    return Generic("".join(lines), tuple(values))
