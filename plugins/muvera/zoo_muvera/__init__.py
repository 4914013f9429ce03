"""MUVERA: multi-vector retrieval through Fixed Dimensional Encodings and single-vector MIPS."""

__version__ = "0.1.0"
