"""Scale-vector strategies for RMSNorm in pre-norm LLMs (Wang et al. 2026)."""

__version__ = "0.1.0"
