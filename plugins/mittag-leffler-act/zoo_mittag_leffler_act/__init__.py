"""A learnable activation x * g(x) whose gate g is built from the two-parameter Mittag-Leffler function."""
