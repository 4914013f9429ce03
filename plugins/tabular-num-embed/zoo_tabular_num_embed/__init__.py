"""Embeddings for numerical features (Gorishniy, Rubachev and Babenko 2022) for zoo: piecewise-linear encoding with
quantile or tree bins, periodic embeddings (PLR), and the MLP over them."""

__version__ = "0.1.0"
