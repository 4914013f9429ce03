"""CRATE-MAE (Pai et al., ICLR 2024) for zoo: a white-box masked autoencoder of MSSA and ISTA layers."""

__version__ = "0.1.0"
