"""Linear transformers as fast weight programmers (Schlag et al. 2021) for zoo: the delta-rule fast-weight layer with
DPFP features, and the additive (linear-attention) rule it replaces."""

__version__ = "0.1.0"
