"""Sparse probing (Gurnee et al. 2023, "Finding Neurons in a Haystack") for zoo: rank neurons for a binary feature,
fit logistic probes on the top k, and read F1 against k per layer."""

__version__ = "0.1.0"
