"""SAEs in Euclidean, lifted and function spaces (Tolooshams, Shen, Anandkumar 2025) for zoo."""

__version__ = "0.1.0"
