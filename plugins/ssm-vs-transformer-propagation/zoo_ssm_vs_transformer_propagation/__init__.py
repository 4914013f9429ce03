"""Representation propagation in SSMs vs Transformers (catalog 64) for zoo: token homogenization, layerwise CKA,
perturbation stability, per-layer probes and randomized-parameter controls, on a tiny GPT and a tiny S4D char-LM."""

__version__ = "0.1.0"
