"""zoo hooks for shifted-basis positional encodings: three embedder MLPs and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Rethinking Positional Encoding", year=2021, arxiv="2107.02561",
              code="https://github.com/osiriszjq/Rethinking-positional-encoding", catalog=37)
TASK = "image_fit"
CLAIM = ("Non-Fourier shifted-basis embeddings (Gaussian, triangle) work as positional encodings as well as Fourier "
         "features (best test PSNR within 1 dB, 1-D camera rows and 64x64 camera), and performance follows the "
         "stable-rank vs distance-preservation trade-off (train PSNR rises with stable rank; test PSNR peaks at an "
         "interior bandwidth)")
_BUILDER = "zoo_shifted_basis_pe.model:shifted_basis_mlp"
_WHAT = "64 centres per axis on [-1, 1] (separable), then one hidden ReLU layer of width 128"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="sbpe_gaussian", builder=_BUILDER, task=TASK, paper=PAPER,
                  defaults={"basis": "gaussian", "sigma": 0.03},
                  description=f"shifted Gaussian embedding (sigma=0.03), {_WHAT}"),
        ModelSpec(name="sbpe_triangle", builder=_BUILDER, task=TASK, paper=PAPER,
                  defaults={"basis": "triangle", "sigma": 0.06},
                  description=f"shifted triangle (hat) embedding (half-width 0.06), {_WHAT}",
                  weights={"camera": WeightsSpec(
                      repo="zoo-models/sbpe-triangle-camera",
                      snapshot="zoo_shifted_basis_pe:weights/sbpe_triangle.camera",
                      files={"config.json": "2f44ba97aa9a9394335bc294686034f5c67c79c02b17face2cf0e55ff2c23461",
                             "model.safetensors": "c7531e753165abe32bd4f3f979a3272079a54ad47d4186a1a8a2064f43cd4f25"},
                      recipe="zoo_shifted_basis_pe.train:camera",
                      description="sbpe_triangle fitted to 64x64 camera (image_fit, Adam 1e-3, 500 steps, seed 0)")}),
        ModelSpec(name="sbpe_rff", builder=_BUILDER, task=TASK, paper=PAPER, defaults={"basis": "rff", "sigma": 5.0},
                  description="per-axis random Fourier features (32 frequencies per axis, N(0, 5^2)), the special "
                              "case of shifted sinusoids; then one hidden ReLU layer of width 128"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="shifted-basis-pe", claim=CLAIM, reproduce="zoo_shifted_basis_pe.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=180.0)]
