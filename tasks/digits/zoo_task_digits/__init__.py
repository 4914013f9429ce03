"""zoo task distribution: digits_classify: scikit-learn digits, fixed split, reference backbones as baselines.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
