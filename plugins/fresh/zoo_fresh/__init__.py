"""FreSh (Kania et al., ICLR 2025) for zoo: pick an INR embedding hyperparameter by spectrum matching."""
