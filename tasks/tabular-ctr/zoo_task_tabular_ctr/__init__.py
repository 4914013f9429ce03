"""zoo task distribution: tabular_ctr: prediction over tables of outcomes. Now its ``matrix`` mode (a synthetic
model x question correctness matrix: correctness prediction, routing, a planted-trait probe); the table/CTR modes
are issue 17's.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
