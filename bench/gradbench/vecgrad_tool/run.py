"""The vecgrad tool's entry point, as a script.

In vecgrad's repository: `python bench/gradbench/vecgrad_tool/run.py`. As a GradBench tool
(this folder copied to python/gradbench/gradbench/tools/vecgrad/, see ../README.md):
`python python/gradbench/gradbench/tools/vecgrad/run.py`.
"""
import sys
from pathlib import Path

if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path.remove(str(here))  # the eval modules are imported as this package's modules
    try:  # inside GradBench (its python/gradbench folder is on PYTHONPATH)
        from gradbench.tools.vecgrad.protocol import main
    except ImportError:  # inside vecgrad's repository
        sys.path.insert(0, str(here.parent))
        from vecgrad_tool.protocol import main
    try:
        main()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
