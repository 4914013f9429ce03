"""F-INR (Vemuri, Buechner, Denzler, WACV 2026) for zoo: axis-wise sub-networks + tensor decomposition."""

__version__ = "0.1.0"
