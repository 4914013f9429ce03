"""Functional Attention (FUNCATTN) for zoo: attention as a functional map between adaptive bases."""

__version__ = "0.1.0"
