"""zoo plugin: pointwise Riemannian Dimension of a fully connected net from its layers' feature spectra, and the
resulting generalization bound beside size- and norm-based ones. Torch-free on import."""

__version__ = "0.1.0"
