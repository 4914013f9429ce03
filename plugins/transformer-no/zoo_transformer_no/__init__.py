"""Transformer neural operators (Calvello et al. 2024) for zoo: continuum attention on points, patched 2D grids."""

__version__ = "0.1.0"
