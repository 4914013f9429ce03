"""zoo task distribution: operator_learn (neural operators on solver-made PDE data and functional regression)
and function_generate (generative models of functions on irregular points).

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
