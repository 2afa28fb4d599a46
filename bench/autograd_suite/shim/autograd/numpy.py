"""autograd.numpy -> vecgrad.numpy. Submodules (random, linalg, fft) resolve through the
import hook in `_alias`."""
from vecgrad.numpy import *

from ._alias import install

__path__: list[str] = []  # a package, so that `import autograd.numpy.random` is looked up
install()
