"""DNN vs visual cortex representation comparison (Shi, Shea-Brown and Buice 2019) for zoo: similarity of similarity
matrices between recorded responses and every network layer, bootstrapped over stimuli and units, and the
pseudo-depth (the best-matching layer)."""

__version__ = "0.1.0"
