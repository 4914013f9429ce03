"""zoo task distribution: voxel_encode: in-context voxelwise encoders on synthetic voxels over frozen random-CNN
features of real images (scikit-learn digits, scikit-image lfw_subset).

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
