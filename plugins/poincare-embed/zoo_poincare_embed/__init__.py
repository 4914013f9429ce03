"""Poincaré embeddings (Nickel & Kiela, NeurIPS 2017) for zoo: hierarchies in the hyperbolic ball."""

__version__ = "0.1.0"
