"""Net2Vec (Fong & Vedaldi 2018) for zoo: concept embeddings as learned linear combinations of a layer's filter
responses, for segmentation (set IoU) and classification, against the best single filter."""

__version__ = "0.1.0"
