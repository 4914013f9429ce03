"""The second-order lens of CLIP neurons (Gandelsman, Efros & Steinhardt 2024) for zoo: each MLP neuron's effect
through the later attention heads on the image embedding, its selectivity, its single-direction approximation and a
sparse text decomposition of that direction, with a tiny CLIP-like model trained in code on digits."""

__version__ = "0.1.0"
