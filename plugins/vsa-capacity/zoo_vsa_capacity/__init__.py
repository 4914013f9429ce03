"""Capacity analysis of VSAs (Clarkson, Ubaru & Yang 2023) for zoo: reference MAP-I, MAP-B, sparse binary and Hopfield
set memories with the dimensions their membership and intersection guarantees need, measured on vsa_bench."""

__version__ = "0.1.0"
