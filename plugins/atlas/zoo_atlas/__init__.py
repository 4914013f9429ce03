"""aTLAS (Zhang et al. 2024) for zoo: task vectors composed with learned per-block (anisotropic) coefficients."""

__version__ = "0.1.0"
