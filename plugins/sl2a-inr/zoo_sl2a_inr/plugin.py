"""zoo hooks for SL2A-INR: the model and its claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="SL2A-INR: Single-Layer Learnable Activation for Implicit Neural Representation", year=2025,
              arxiv="2409.10836", code="https://github.com/moeinheidari7829/SL2A-INR", catalog=36)
TASK = "image_fit"
CLAIM = ("SL2A-INR converges faster and higher than SIREN: on 64x64 camera at equal parameters and the same "
         "number of Adam steps, SL2A-INR reaches 30 dB training PSNR in fewer steps and ends at a higher training "
         "PSNR than SIREN (ReLU+Fourier features reported beside)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            name="sl2a_inr", builder="zoo_sl2a_inr.model:sl2a_inr", task=TASK, paper=PAPER,
            description="SL2A-INR: Chebyshev learnable-activation layer (K=64) + LayerNorm, then 3 low-rank (r=16) "
                        "ReLU fusion layers modulated by the LA output; width 64 (paper: K=256, width 256, r=128)",
            weights={"camera": WeightsSpec(
                repo="zoo-models/sl2a-inr-camera",
                snapshot="zoo_sl2a_inr:weights/sl2a_inr.camera",
                files={"config.json": "478e6b1ef729c3550ecbd55d51bb569a3fa997dd4264d34ac0d195f308f1e0c1",
                       "model.safetensors": "719a424d62bec98ec40522f05d98699726c3e5ef1c992f3a5fba81e21e7d3307"},
                recipe="zoo_sl2a_inr.train:camera",
                description="sl2a_inr fitted to 64x64 camera (image_fit, Adam 1e-3 decayed to 1e-4, 500 steps, "
                            "seed 0)")},
        ),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="sl2a-inr", claim=CLAIM, reproduce="zoo_sl2a_inr.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
