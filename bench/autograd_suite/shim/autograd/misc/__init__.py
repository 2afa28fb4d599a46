"""autograd.misc: optimizers, flatten and fixed points, written on vecgrad's API."""
from .flatten import flatten

__all__ = ["flatten"]
