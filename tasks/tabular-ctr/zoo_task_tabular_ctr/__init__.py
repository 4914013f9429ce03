"""zoo task distribution: tabular_ctr: prediction over tables of outcomes. Modes: ``matrix`` (a synthetic model x
question correctness matrix: correctness prediction, routing, a planted-trait probe), ``table`` (real and synthetic
tables: regression and classification) and ``ctr`` (click-through with behaviour histories).

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
