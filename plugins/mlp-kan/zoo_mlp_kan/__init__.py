"""MLP-KAN: transformers whose feed-forward layer mixes MLP experts and KAN experts (top-k MoE)."""
