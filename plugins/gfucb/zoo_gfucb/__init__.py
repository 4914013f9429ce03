"""zoo plugin gfucb: Generalized Functional UCB for multitask contextual bandits."""

__version__ = "0.1.0"
