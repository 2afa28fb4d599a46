"""Batching (the `batch` and `scans` stages of vecgrad.pipeline): the loop iterations of a
trace merged into whole-array operations (batching.py, with deps, chains, agenda, regions,
gather, sums, windows), and the recurrences left sequential rolled into loops and scans
(scans.py, with recur, roll, loops). `notes` collects what batching tells `explain`."""
