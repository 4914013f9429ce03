"""Necessary conditions for compositional generalisation (Uselis et al. 2026) for zoo: linear factorisation of
representations into per-concept factors, their rank and cross-concept orthogonality."""

__version__ = "0.1.0"
