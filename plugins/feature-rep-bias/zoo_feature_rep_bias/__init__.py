"""Learned feature representations are biased (Lampinen et al. 2024) for zoo: the share of a representation's
variance explained by each feature, and a generator of simple and complex features matched in computational role."""

__version__ = "0.1.0"
