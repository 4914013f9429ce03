"""Boolean influence, noise stability, pointer value retrieval (PVR) functions and canonical holdout (Abbe et al.
2022, "Learning to Reason with Neural Networks: Generalization, Unseen Data and Boolean Measures") for zoo."""

__version__ = "0.1.0"
