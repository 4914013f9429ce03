"""Binary Paragraph Vectors (Grzegorczyk & Kurdziel 2017) for zoo: short binary document codes learned from raw text."""

__version__ = "0.1.0"
