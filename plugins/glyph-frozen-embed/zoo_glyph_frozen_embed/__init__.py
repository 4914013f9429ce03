"""Frozen visual Unicode glyph embeddings (Bochkov 2025) for zoo: a char GPT whose token table is rendered, not learned."""

__version__ = "0.1.0"
