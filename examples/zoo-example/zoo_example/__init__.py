"""A complete minimal zoo plugin: a He-initialised two-layer MLP on digits_classify (must not import torch)."""

__version__ = "0.1.0"
