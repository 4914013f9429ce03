"""FLOPs-regularised sparse embeddings for fast inverted-index retrieval (Paria et al., ICLR 2020)."""
