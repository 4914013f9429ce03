"""zoo plugin stl-embed-inversion: a decoder-only Transformer that turns STL kernel embeddings back into formulae."""

__version__ = "0.1.0"
