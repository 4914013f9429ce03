"""zoo task icl_toy: tiny GPTs trained in code on synthetic in-context tasks, with head and residual hooks."""

__version__ = "0.1.0"
