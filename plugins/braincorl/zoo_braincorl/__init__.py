"""BraInCoRL (Yu et al. 2025) for zoo: a meta-learned in-context transformer that maps a voxel's (image feature,
response) shots to the weights of its linear encoder, evaluated on the voxel_encode task."""

__version__ = "0.1.0"
