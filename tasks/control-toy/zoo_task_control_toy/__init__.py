"""zoo task control_toy: multitask contextual bandits and an 8x8 gridworld with random reward families."""

__version__ = "0.1.0"
