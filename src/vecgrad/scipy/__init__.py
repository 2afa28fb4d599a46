"""`vecgrad.scipy`: SciPy for traced code, with gradients, mirroring jax.scipy
(`special`, `stats`, `linalg`, `signal`). SciPy itself is imported only when a function
needs it to compute (pip install 'vecgrad[scipy]')."""
from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
