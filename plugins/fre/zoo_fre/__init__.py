"""zoo plugin fre: Functional Reward Encoding for zero-shot RL."""

__version__ = "0.1.0"
