"""zoo hooks for Implicit Neural Teaching: two INT-trained INRs and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Nonparametric Teaching of Implicit Neural Representations", year=2024, arxiv="2405.10531",
              code="https://github.com/stevolopolis/nmt_inr", catalog=66)
TASK = "image_fit"
CLAIM = ("Implicit Neural Teaching (train each step on the pixels with the largest residual) reaches the same PSNR "
         "with at least 30% less wall time than full-batch training: 64x64 camera, 30 dB training PSNR, for a SIREN "
         "and a ReLU+Fourier-features MLP of equal size, all runs interleaved in one process")
_TRAIN = "trained by INT: start ratio 0.2, 'step' ratio schedule, 'incremental' reselection, Adam + cosine decay"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="int_siren", builder="zoo_implicit_neural_teaching.model:int_siren", task=TASK, paper=PAPER,
                  description=f"SIREN (3 sine layers of 64, w0=30, lr 1e-4) {_TRAIN}",
                  weights={"camera": WeightsSpec(
                      repo="zoo-models/int-siren-camera",
                      snapshot="zoo_implicit_neural_teaching:weights/int_siren.camera",
                      files={"config.json": "52ef597fd6ede3b8daf389f84402678f7687194c009e4e8a273770392440a0e5",
                             "model.safetensors": "0027c8d3e26c38a12e497f5f06524da57bb1ebce84149ad68aacd5f6b28a0dd1"},
                      recipe="zoo_implicit_neural_teaching.train:camera",
                      description="int_siren fitted to 64x64 camera by INT (image_fit, 1000 steps, seed 0)")}),
        ModelSpec(name="int_relu_ff", builder="zoo_implicit_neural_teaching.model:int_relu_ff", task=TASK,
                  paper=PAPER,
                  description=f"ReLU MLP (3 layers of 16) on 256 Gaussian Fourier features (sigma=5, lr 1e-3) {_TRAIN}"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="implicit-neural-teaching", claim=CLAIM,
                      reproduce="zoo_implicit_neural_teaching.reproduce:REPRODUCTION", task=TASK, paper=PAPER,
                      budget_s=180.0)]
