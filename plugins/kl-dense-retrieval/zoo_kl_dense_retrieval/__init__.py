"""Multivariate (Gaussian) representations for dense retrieval, scored by negative KL (Zamani & Bendersky, SIGIR 2023)."""
