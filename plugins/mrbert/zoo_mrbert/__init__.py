"""MrBERT (Tamayo et al. 2026) for zoo: a ModernBERT encoder with Matryoshka sentence embeddings, and a loader of
the released BSC-LT checkpoints."""

__version__ = "0.1.0"
