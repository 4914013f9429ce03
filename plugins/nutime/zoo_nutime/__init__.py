"""NuTime (Lin et al., TMLR 2024) for zoo: numerically multi-scaled embeddings for time-series pretraining."""

__version__ = "0.1.0"
