"""WAVES (Gu et al. 2025) for zoo: weakly supervised statement-level vulnerability localisation via MIL pseudo labels."""

__version__ = "0.1.0"
