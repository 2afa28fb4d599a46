"""`vg.nn`: numerically stable neural-network functions with fused VJPs."""
from .numpy._nn import log_softmax, logsumexp, relu, sigmoid, softmax, softplus

__all__ = ["log_softmax", "logsumexp", "relu", "sigmoid", "softmax", "softplus"]
