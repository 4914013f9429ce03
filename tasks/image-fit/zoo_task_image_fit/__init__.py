"""zoo task distribution: image_fit and signal_set_fit: fitting real scikit-image images with coordinate
networks, and spaces of small images.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
