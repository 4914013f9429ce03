"""EmbedLLM (Zhuang et al. 2024) for zoo: model embeddings learned from a model x question correctness matrix, for
routing and probing, measured on tabular_ctr's matrix mode."""

__version__ = "0.1.0"
