"""zoo-nn: the reference networks tasks and plugins share (B-spline KAN, small GPT, SIREN and
Fourier-feature MLPs, small image backbones). One module per network family."""

__version__ = "0.1.0"
