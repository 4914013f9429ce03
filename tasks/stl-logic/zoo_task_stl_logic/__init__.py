"""zoo task distribution: stl_logic: Signal Temporal Logic formulae (a seeded random generator, a prefix tokenizer),
their quantitative robustness on sampled trajectories and the STL kernel, for formula embedding and inversion.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
