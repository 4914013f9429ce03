"""zoo hooks for crate-mae: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Masked Completion via Structured Diffusion with White-Box Transformers", year=2024,
              arxiv="2404.02446", code="https://github.com/Ma-Lab-Berkeley/CRATE", catalog=120)
TASK = "ssl_probe"

CLAIM = ("CRATE-MAE, a masked autoencoder whose encoder layers are MSSA compression + ISTA sparse-coding steps and "
         "whose decoder layers invert them, uses about 30% of the parameters of a standard ViT masked autoencoder of "
         "the same configuration, with comparable linear-probe accuracy and masked reconstruction error "
         "(small scale: scikit-learn digits, patch 2, 75% masking, equal steps)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="crate_mae", builder="zoo_crate_mae.model:crate_mae", task=TASK, paper=PAPER,
                  description="CRATE-MAE: encoder layers z + MSSA(LN z) (Q = K = V = U_k^T z) then one ISTA step "
                              "ReLU(x + eta D^T(x - Dx) - eta lambda); decoder layers D_dec LN y then y - MSSA(LN y); "
                              "75% mask tokens, MSE on masked patches; CPU default 8x8 patch 2, d 32, 3 + 3 layers, "
                              "preset='tiny'|'small'|'base'|'large' for the paper's sizes",
                  weights={"fashion_mnist": WeightsSpec(
                      repo="zoo-models/crate-mae-fashion-mnist",
                      snapshot="zoo_crate_mae:weights/crate_mae.fashion_mnist",
                      files={"config.json": "94bfa978fa19810809743cf36e42c395e2af1381416de909db905a0b759dabde",
                             "model.safetensors": "d9dd74284eda8d12f8ad629cca73edbdea36713c9b871cccd14768744b40dbaa"},
                      recipe="zoo_crate_mae.train:fashion_mnist",
                      description="crate_mae (28x28, patch 4) pretrained by ssl_probe on 10,000 unlabeled "
                                  "Fashion-MNIST images, seed 0 (zoo_crate_mae.train:fashion_mnist, 600 steps)")}),
        ModelSpec(name="mae_vit", builder="zoo_crate_mae.model:mae_vit", task=TASK, paper=PAPER,
                  description="The paper's comparison: the same masked autoencoder with standard ViT blocks "
                              "(separate QKV, 4x GELU MLP), same depth, width, heads, patch and masking"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="crate-mae", claim=CLAIM, reproduce="zoo_crate_mae.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
