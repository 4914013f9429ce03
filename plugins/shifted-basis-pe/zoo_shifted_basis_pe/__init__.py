"""Rethinking Positional Encoding (Zheng, Ramasinghe, Lucey 2021) for zoo."""
