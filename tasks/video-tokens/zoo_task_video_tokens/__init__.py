"""zoo task distribution: video_tokens: short videos of moving real digits as frozen patch-token grids, compressed by
a model to a codebook and an index map, scored by the accuracy of a fixed classifier against the token ratio.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
