"""Clustering-based token pooling: fewer stored vectors per document for multi-vector retrieval."""

__version__ = "0.1.0"
