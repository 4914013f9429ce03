"""Clustering-based token pooling: fewer stored vectors per document for multi-vector retrieval."""
