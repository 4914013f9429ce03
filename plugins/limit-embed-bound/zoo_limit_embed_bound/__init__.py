"""LIMIT (Weller et al. 2025): the dimension of single-vector embeddings bounds the top-k sets they can return."""

__version__ = "0.1.0"
