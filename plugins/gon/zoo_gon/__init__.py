"""Gradient Origin Networks (Bond-Taylor & Willcocks, ICLR 2021) for zoo."""
