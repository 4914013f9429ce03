"""Scale-vector strategies for RMSNorm in pre-norm LLMs (Wang et al. 2026)."""
