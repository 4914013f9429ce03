"""zoo task distribution: shape_match: zero-shot non-rigid shape correspondence with functional maps on seeded
synthetic meshes with a planted correspondence; the model under test is the map regulariser.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
