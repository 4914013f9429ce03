"""Derf (Dynamic erf): a point-wise, statistics-free replacement for LayerNorm in Transformers."""
