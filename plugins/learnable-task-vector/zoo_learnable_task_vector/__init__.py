"""Learnable task vectors (Saglam et al. 2025) for zoo: a task vector as a learned weighted sum of attention heads."""

__version__ = "0.1.0"
