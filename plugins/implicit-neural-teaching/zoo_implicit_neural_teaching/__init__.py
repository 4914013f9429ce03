"""Implicit Neural Teaching (INT) for zoo: the model code lives in ``model.py``, the hooks in ``plugin.py``."""

__version__ = "0.1.0"
