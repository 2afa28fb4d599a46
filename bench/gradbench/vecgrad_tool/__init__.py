"""vecgrad's tool for GradBench (https://github.com/gradbench/gradbench).

One module per eval, each written in the loop style of the eval's naive reference; `protocol`
speaks GradBench's JSON-lines protocol on stdin/stdout. Run it as `python bench/gradbench/vecgrad_tool/run.py`
(or, inside a GradBench checkout, as `python python/gradbench/gradbench/tools/vecgrad/run.py`).
"""
