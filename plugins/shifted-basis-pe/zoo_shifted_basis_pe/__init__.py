"""Rethinking Positional Encoding (Zheng, Ramasinghe, Lucey 2021) for zoo."""

__version__ = "0.1.0"
