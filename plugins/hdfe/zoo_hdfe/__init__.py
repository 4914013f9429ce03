"""HDFE (Yuan et al., ICLR 2024) for zoo: training-free, sampling-invariant, decodable vectors of functions."""

__version__ = "0.1.0"
