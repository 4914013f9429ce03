"""Irreducible multi-dimensional (circular) features (Engels et al. 2024) for zoo: circle fits of class means,
separability and mixture indices, and circle-plane rotation interventions on the icl_toy token GPT."""

__version__ = "0.1.0"
