"""CRISP (Veneroso et al. 2025): multi-vector retrieval trained with k-means clustering inside the loss."""

__version__ = "0.1.0"
