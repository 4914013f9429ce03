"""Attention-based resonator network (Yeung, Poduval & Imani 2024) for zoo: VSA factorisation with modern-Hopfield
(softmax attention) cleanup, measured against the classic resonator on the vsa_bench task."""

__version__ = "0.1.0"
