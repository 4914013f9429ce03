"""VaMoH: Variational Mixture of HyperGenerators (Koyuncu et al., ICML 2023) for zoo."""
