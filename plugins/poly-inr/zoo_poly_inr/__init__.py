"""Poly-INR (Singh et al., CVPR 2023) for zoo."""
