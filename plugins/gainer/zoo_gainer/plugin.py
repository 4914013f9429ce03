"""zoo hooks for GaINeR: the model, its pretrained tag and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="GaINeR: Geometry-Aware Implicit Neural Representation for Image Editing", year=2025,
              arxiv="2511.20924", code="https://github.com/WJakubowska/GaINeR", catalog=114)
TASK = "image_fit"
CLAIM = ("GaINeR is a continuous image representation (>= 25 dB on 64x64 camera) that allows local edits: moving "
         "5 Gaussians changes only pixels within their 3-sigma support (>= 99% of the changed pixels of the 2x "
         "grid), and a smaller part of the image than an edit of one unit of SIREN or ReLU+FF (equal parameter "
         "count) of at most the same size")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            name="gainer", builder="zoo_gainer.model:gainer", task=TASK, paper=PAPER,
            description="GaINeR: 1024 trainable 2-D Gaussians (mean, diagonal covariance, 16-d feature + 8-level "
                        "hash grid while training); the 16 nearest Gaussians' density-weighted features -> MLP "
                        "2 x 64 -> sigmoid",
            weights={"camera": WeightsSpec(
                repo="zoo-models/gainer-camera",
                snapshot="zoo_gainer:weights/gainer.camera",
                files={"config.json": "87db258ebc934023440ae796bfbe77fc87c2a3bb43d6fddd3a837b0932225421",
                       "model.safetensors": "d5e366dd78f3d9ab551e4799ca1a4901a86b39eb0ea7ef21873e2026e85a7ff1"},
                recipe="zoo_gainer.train:camera",
                description="gainer fitted to 64x64 camera (image_fit, 2000 full-batch Adam steps, seed 0), baked")},
        ),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="gainer", claim=CLAIM, reproduce="zoo_gainer.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
