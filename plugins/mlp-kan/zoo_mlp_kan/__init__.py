"""MLP-KAN: transformers whose feed-forward layer mixes MLP experts and KAN experts (top-k MoE)."""

__version__ = "0.1.0"
