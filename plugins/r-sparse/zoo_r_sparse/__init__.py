"""R-Sparse: training-free rank-aware activation sparsity for linear layers (Zhang et al. 2025)."""

__version__ = "0.1.0"
