"""zoo hooks for GON: the implicit GON model and its claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Gradient Origin Networks", year=2021, arxiv="2007.02798", code="https://github.com/cwkx/GON",
              catalog=48)
TASK = "signal_set_fit"
CLAIM = ("GON converges faster and reaches a significantly lower reconstruction error than an autoencoder with "
         "twice its parameters: implicit GON vs the ae-2x baseline on 16x16 digits after the same Adam steps, "
         "lower held-out reconstruction MSE")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="gon_implicit", builder="zoo_gon.model:gon_implicit", task=TASK, paper=PAPER,
        description="implicit GON: a SIREN F(coords, z); z = -grad_z0 of the reconstruction loss at z0 = 0, "
                    "trained end-to-end through that gradient (second order); latent 32, width 64, 3 sine "
                    "layers by default (paper: width 256, 4 layers)",
        weights={"digits": WeightsSpec(
            repo="zoo-models/gon-implicit-digits",
            snapshot="zoo_gon:weights/gon_implicit.digits",
            files={"config.json": "78886397ea45edb70ca01c93b723648dfe39b184e0a77af4778ebcf7bc70e139",
                   "model.safetensors": "6dbe585737ce9ce5c62760267a8d03a6aa944d6e7df9e31f1e1cb576d02ce669"},
            recipe="zoo_gon.train:digits",
            description="gon_implicit trained on 512 16x16 digits (signal_set_fit, Adam 1e-4, batch 64, 500 steps, "
                        "seed 0)")})]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="gon", claim=CLAIM, reproduce="zoo_gon.reproduce:REPRODUCTION", task=TASK, paper=PAPER,
                      budget_s=180.0)]
