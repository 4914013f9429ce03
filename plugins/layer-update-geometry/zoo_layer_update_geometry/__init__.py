"""Geometry of layer updates (Yoo 2026) for zoo: the update of each layer split into a tokenwise component f(h_l)
and a residual, their alignment, angles, subspace projections, and the error-perturbation Spearman correlation."""

__version__ = "0.1.0"
