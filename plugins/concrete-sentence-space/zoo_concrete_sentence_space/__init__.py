"""Concrete sentence spaces (Grefenstette, Sadrzadeh, Clark, Coecke & Pulman 2011) for zoo: sentences in N (x) N."""

__version__ = "0.1.0"
