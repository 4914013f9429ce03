"""lambda-orthogonality: a near-orthogonal affine adapter from a new embedding space to an old one (Ricci et al., 2025)."""

__version__ = "0.1.0"
