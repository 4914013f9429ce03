"""SL2A-INR (Heidari et al., ICCV 2025) for zoo."""
