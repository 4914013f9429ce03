"""Derf (Dynamic erf): a point-wise, statistics-free replacement for LayerNorm in Transformers."""

__version__ = "0.1.0"
