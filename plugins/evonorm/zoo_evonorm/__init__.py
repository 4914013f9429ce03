"""EvoNorms: normalization and activation fused into one evolved layer (EvoNorm-B0, EvoNorm-S0)."""

__version__ = "0.1.0"
