"""KV-Embedding (Tang & Yang 2026) for zoo: training-free sentence embeddings by re-routing the last token's KV states."""

__version__ = "0.1.0"
