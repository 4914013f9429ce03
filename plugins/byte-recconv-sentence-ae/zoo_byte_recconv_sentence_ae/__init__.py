"""Byte-level recursive convolutional sentence autoencoder (Malik, Lancucki & Chorowski 2018) for zoo."""

__version__ = "0.1.0"
