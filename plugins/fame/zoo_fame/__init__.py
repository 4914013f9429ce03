"""FAME (Gao, Chen and Zhang, NeurIPS 2025) for zoo: functional attention with a mixture of experts."""

__version__ = "0.1.0"
