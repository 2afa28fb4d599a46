"""Per-iteration fields: a loop whose iterations each split a vector of their own into parts
(a camera's rotation, translation and focal length; an inlined Jacobian's blocks per
observation; the gates of a per-row projection) reads, per iteration, one array at the same
few ranges or lists. The passes that pack reads of one array at several lengths (`listmaps`,
`packed`) gain nothing there: the parts feed different work, and batching merges each part
across the iterations. This tells such groups apart, by their layout repeating."""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import TypeVar

K = TypeVar("K")


def fields(layouts: dict[K, tuple[Hashable, ...]]) -> set[K]:
    """The keys (one array's group of reads each) whose layout, the reads' ranges or lengths
    in order, more than twice as many keys repeat as it has reads: one loop's iterations
    unpacking vectors of their own (ba: 1,000 keys of 3 reads), not a loop over the segments
    of one array (CSR rows, neighbour lists: one key of many reads, or a few alike)."""
    n = Counter(layouts.values())
    return {k for k, lay in layouts.items() if n[lay] > 2 * len(lay)}


__all__ = ["fields"]
