"""Function vectors (Todd et al. 2024) for zoo: the heads that carry an in-context task, found by causal mediation."""

__version__ = "0.1.0"
