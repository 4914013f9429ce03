"""VaMoH: Variational Mixture of HyperGenerators (Koyuncu et al., ICML 2023) for zoo."""

__version__ = "0.1.0"
