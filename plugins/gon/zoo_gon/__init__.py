"""Gradient Origin Networks (Bond-Taylor & Willcocks, ICLR 2021) for zoo."""

__version__ = "0.1.0"
