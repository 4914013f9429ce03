"""zoo plugin stl-kernel-embed: a Transformer encoder of STL formulae distilled from the STL robustness kernel."""

__version__ = "0.1.0"
