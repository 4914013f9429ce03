"""ReLU² and the magnitude-threshold (CETT) activation sparsity of "ReLU² Wins" (Zhang et al. 2024)."""

__version__ = "0.1.0"
