"""FreSh (Kania et al., ICLR 2025) for zoo: pick an INR embedding hyperparameter by spectrum matching."""

__version__ = "0.1.0"
