"""Multivariate (Gaussian) representations for dense retrieval, scored by negative KL (Zamani & Bendersky, SIGIR 2023)."""

__version__ = "0.1.0"
