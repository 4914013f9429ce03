"""Task Vector Bases (Zeng et al.) for zoo: T task vectors compressed into M < T basis atoms."""

__version__ = "0.1.0"
