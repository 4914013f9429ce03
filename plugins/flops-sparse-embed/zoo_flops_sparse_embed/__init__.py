"""FLOPs-regularised sparse embeddings for fast inverted-index retrieval (Paria et al., ICLR 2020)."""

__version__ = "0.1.0"
