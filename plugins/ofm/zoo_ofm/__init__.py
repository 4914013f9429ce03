"""Operator Flow Matching (Shi et al. 2025) for zoo: flow matching from a GP to a stochastic process, on any point set."""

__version__ = "0.1.0"
