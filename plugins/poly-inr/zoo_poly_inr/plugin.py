"""zoo hooks for Poly-INR: the model, its pretrained tag and its claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Polynomial Implicit Neural Representations For Large Diverse Datasets", year=2023,
              arxiv="2303.11424", code="https://github.com/Rajhans0/Poly_INR", catalog=16)
TASK = "image_fit"
CLAIM = ("Without positional encoding, Poly-INR represents an image better than a ReLU MLP with Fourier-feature "
         "positional encoding of the same parameter count: on 64x64 camera after the same Adam steps, Poly-INR's "
         "training-grid PSNR is >= the ReLU+PE MLP's (SIREN reported beside)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            name="poly_inr", builder="zoo_poly_inr.model:poly_inr", task=TASK, paper=PAPER,
            description="Poly-INR without positional encoding: per level, features times an affine map of the "
                        "coordinates (A_i x + b_i), then Linear + LeakyReLU(0.2); width 64, 4 levels by default",
            weights={"camera": WeightsSpec(
                repo="zoo-models/poly-inr-camera",
                snapshot="zoo_poly_inr:weights/poly_inr.camera",
                files={"config.json": "4472a161cc8f558ac6420a8e225226ee380813fe3608fbecebcd521e886dec79",
                       "model.safetensors": "d9da0ea2f7ee17876d6df8a7ac804885bb83b4a24b450a437ecfdb0d83680172"},
                recipe="zoo_poly_inr.train:camera",
                description="poly_inr fitted to 64x64 camera (image_fit, Adam 1e-3, fixed steps, seed 0)")},
        ),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="poly-inr", claim=CLAIM, reproduce="zoo_poly_inr.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
