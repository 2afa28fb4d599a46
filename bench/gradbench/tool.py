"""The vecgrad tool for GradBench, as a script: `python bench/gradbench/tool.py` (see README.md)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vecgrad_tool.protocol import main

if __name__ == "__main__":
    try:
        main()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
