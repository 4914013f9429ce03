"""zoo task distribution: formula_regress: regression of closed-form formulas (KAN-paper style), MLP and KAN baselines.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
