"""Poly-INR (Singh et al., CVPR 2023) for zoo."""

__version__ = "0.1.0"
