"""Quick-Thoughts (Logeswaran & Lee 2018) for zoo: sentence vectors learned by classifying the true context sentence."""

__version__ = "0.1.0"
