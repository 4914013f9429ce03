"""R-Sparse: training-free rank-aware activation sparsity for linear layers (Zhang et al. 2025)."""
