"""zoo task distribution: retrieval: dense and multi-vector retrieval on digits and real Wikipedia leads, exact-search baselines.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
