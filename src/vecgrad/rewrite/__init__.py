"""Rewrites: the engine (rules as data: pattern, replacement, a one-line algebra; engine.py),
`simplify`'s rules (the table in simplify.py; the rules in identities, regions, scalings,
contract, distribute, layout, narrow, hoist, segments, addchain, softmax, complexparts),
`reassociate` (chains of contractions reordered and merged), `cse`, `dce`, and the AD
markers' removal (markers). Their order is declared in vecgrad.pipeline.

Three kinds of fusion are kept apart by name: `reassociate`, the fused softmax/logsumexp
primitives of `softmax`, and `fuse_muladd` (backends/numpy/muladd.py, NumPy's LOWER pass)."""
