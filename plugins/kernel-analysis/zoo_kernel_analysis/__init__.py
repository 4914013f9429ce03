"""Kernel analysis of deep networks (Montavon, Braun and Müller 2011) for zoo: how many leading kernel principal
components of a representation a linear classifier needs to predict the labels (the loss-vs-d curve and its area)."""

__version__ = "0.1.0"
