"""zoo hooks for Operator Flow Matching: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Stochastic Process Learning via Operator Flow Matching", year=2025, arxiv="2501.04126", catalog=113)

CLAIM = ("Operator flow matching learns stochastic-process priors from function samples on irregular 1D points: trained "
         "on an RBF Gaussian process it matches the process's mean, covariance and energy distance to within the exact "
         "GP's own sampling noise (plus a margin), and on a non-Gaussian process it beats a GP fitted by marginal "
         "likelihood (the task's `gp` baseline) on energy distance and marginal KS")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="ofm", builder="zoo_ofm.model:ofm", task="function_generate", paper=PAPER,
                      description="operator flow matching: a Matern-5/2 GP reference flowed to the data by a point-set "
                                  "FNO velocity (non-uniform DFT spectral layers), mini-batch OT coupling, midpoint "
                                  "ODE sampling at any points, SGLD functional regression in the GP latent; CPU "
                                  "default width 32, 12 modes, 4 layers; preset='paper' width 64, 32 modes")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="ofm", claim=CLAIM, reproduce="zoo_ofm.reproduce:REPRODUCTION", task="function_generate",
                      paper=PAPER)]
