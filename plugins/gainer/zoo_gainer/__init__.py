"""GaINeR (Jakubowska et al. 2025) for zoo: trainable 2-D Gaussians with features + an MLP decoder."""

__version__ = "0.1.0"
