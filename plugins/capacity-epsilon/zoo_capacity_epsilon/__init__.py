"""Representational capacity from near-orthogonality (Guha 2026) for zoo: the orthogonality tolerance epsilon of an
embedding matrix from its pairwise cosine distribution, and plain-JL vs k/d-adjusted capacity."""

__version__ = "0.1.0"
