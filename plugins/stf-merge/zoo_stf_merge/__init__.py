"""STF merging (Qiu et al. 2025) for zoo: superpose task-specific features of linear layers by solving a linear system."""

__version__ = "0.1.0"
