"""Product of invariances (Cannistraci et al. 2024) for zoo: relative projections under several similarities, aggregated."""

__version__ = "0.1.0"
