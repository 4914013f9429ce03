"""zoo hooks for FreSh: SIREN and Fourier-feature MLPs configured by FreSh, and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="FreSh: Frequency Shifting for Accelerated Neural Representation Learning", year=2025,
              arxiv="2410.05050", code="https://github.com/gmum/FreSh", catalog=49)
TASK = "image_fit"
CLAIM = ("FreSh (match the untrained model's output spectrum to the target's, Wasserstein distance, before "
         "training) picks an embedding setting (SIREN omega_0, Fourier-feature sigma) whose trained PSNR is within "
         "1 dB of the best of a 7-value sweep, averaged over camera, coins, moon and text at 64x64, at the cost of "
         "less than one extra training run")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="fresh_siren", builder="zoo_fresh.model:fresh_siren", task=TASK, paper=PAPER,
                  description="SIREN (3 sine layers of 64, lr 1e-4) whose first-layer omega_0 FreSh picks from "
                              "10..200 before training (10 untrained outputs per value, 64 spectrum bins)",
                  weights={"camera": WeightsSpec(
                      repo="zoo-models/fresh-siren-camera",
                      snapshot="zoo_fresh:weights/fresh_siren.camera",
                      files={"config.json": "1009790e8ec62a748c9dca40c31284824c32d6052d615bd6a8213d11744ca708",
                             "model.safetensors": "7c101d736d4370f2f7f682e75301a3144710f1e661520d0fe78b5483cdf9c204"},
                      recipe="zoo_fresh.train:camera",
                      description="fresh_siren fitted to 64x64 camera (image_fit: FreSh picks omega_0, then Adam "
                                  "1e-4, 250 steps, seed 0)")}),
        ModelSpec(name="fresh_relu_ff", builder="zoo_fresh.model:fresh_relu_ff", task=TASK, paper=PAPER,
                  description="ReLU MLP (3 layers of 16, lr 1e-3) on 256 Gaussian Fourier features whose scale sigma "
                              "FreSh picks from 1..20 before training (10 untrained outputs per value, 128 bins)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="fresh", claim=CLAIM, reproduce="zoo_fresh.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
