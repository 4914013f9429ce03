"""Iterative Feature Merging (Chen, Zhou & Yan 2023) for zoo: merge functionally equivalent features (ReLU neurons
whose incoming weights are positive multiples of each other), count the per-layer feature complexity, and prune a
trained MLP without data."""

__version__ = "0.1.0"
