"""Geometry of SAE concept universes (Li et al. 2024) for zoo: parallelogram "crystals" before and after LDA
distractor removal, spatial modularity of co-occurring features, and the eigenvalue power law of the feature cloud."""

__version__ = "0.1.0"
