"""`vecgrad.numpy.lib`: NumPy's `numpy.lib` functions that apply to traced arrays."""
from . import stride_tricks

__all__ = ["stride_tricks"]
