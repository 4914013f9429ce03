"""SL2A-INR (Heidari et al., ICCV 2025) for zoo."""

__version__ = "0.1.0"
