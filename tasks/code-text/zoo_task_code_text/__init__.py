"""zoo task code_text: code and documentation on real text (the Python standard library) and synthetic code bags."""

__version__ = "0.1.0"
