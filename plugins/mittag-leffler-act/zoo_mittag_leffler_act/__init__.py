"""A learnable activation x * g(x) whose gate g is built from the two-parameter Mittag-Leffler function."""

__version__ = "0.1.0"
