"""D'OH: decoder-only random hypernetworks (Gordon et al. 2024) for zoo."""

__version__ = "0.1.0"
