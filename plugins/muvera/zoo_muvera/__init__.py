"""MUVERA: multi-vector retrieval through Fixed Dimensional Encodings and single-vector MIPS."""
