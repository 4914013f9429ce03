"""Deep Interest Network (Zhou et al. 2018) for zoo: ad-conditioned attention over the user's behaviours for CTR."""

__version__ = "0.1.0"
