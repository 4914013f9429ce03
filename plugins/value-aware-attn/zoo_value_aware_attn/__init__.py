"""Value-aware approximate attention (Gupta and Berant 2021) for zoo: a tool comparing the best value-oblivious
(top-r) and value-aware r-sparse approximations of attention, per kernel."""

__version__ = "0.1.0"
