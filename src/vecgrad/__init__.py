"""vecgrad: write array code the natural way (loops over slices, in-place writes, maps over
samples, plain NumPy), get gradients at the cost of hand-vectorized code.

    import vecgrad as vg
    import vecgrad.numpy as vnp
    grads = vg.grad(loss, argnums=(0, 1))(a, b)
"""
from . import nn, numpy, tree_util
from .api import (
    Transformed,
    clear_cache,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jit,
    value_and_grad,
)
from .checks import GradCheckError, check_grads
from .config import Config, config
from .custom import custom_vjp
from .custom_jvp import custom_jvp
from .errors import (
    ArgumentError,
    CastingError,
    ComplexError,
    ConcretizationError,
    RandomStateError,
    ReadOnlyError,
    ShapeError,
    TracedIntoNumpyError,
    TraceError,
    UnsupportedError,
    VecgradError,
)
from .explain import explain
from .interop import jax_function, torch_function
from .linear_maps import hvp, jvp, linearize, vjp
from .mapping import vmap
from .show import show

__version__ = "0.1.0"


def stop_gradient(x: object) -> object:
    """x unchanged, with a zero gradient: every array leaf of a pytree passes through
    `vecgrad.numpy.stop_gradient` (as `jax.lax.stop_gradient`)."""
    return tree_util.tree_map(numpy.stop_gradient, x)



__all__ = [
    "ArgumentError",
    "CastingError",
    "ComplexError",
    "ConcretizationError",
    "Config",
    "GradCheckError",
    "RandomStateError",
    "ReadOnlyError",
    "ShapeError",
    "TraceError",
    "TracedIntoNumpyError",
    "Transformed",
    "UnsupportedError",
    "VecgradError",
    "check_grads",
    "clear_cache",
    "config",
    "custom_jvp",
    "custom_vjp",
    "explain",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jax_function",
    "jit",
    "jvp",
    "linearize",
    "nn",
    "numpy",
    "show",
    "stop_gradient",
    "torch_function",
    "tree_util",
    "value_and_grad",
    "vjp",
    "vmap",
]
