"""Matryoshka Representation Learning (Kusupati et al., 2022) for zoo: nested embeddings usable at many sizes."""

__version__ = "0.1.0"
