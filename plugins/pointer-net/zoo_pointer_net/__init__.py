"""Pointer Networks (Vinyals et al. 2015) for zoo: content attention over the inputs as the output distribution."""

__version__ = "0.1.0"
