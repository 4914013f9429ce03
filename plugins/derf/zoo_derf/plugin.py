"""zoo hooks for Derf: the three norm-swapped TinyViTs and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Stronger Normalization-Free Transformers", year=2025, arxiv="2512.10938",
              code="https://github.com/zlab-princeton/Derf", catalog=69)
DYT_PAPER = Paper(title="Transformers without Normalization", year=2025, arxiv="2503.10622",
                  code="https://github.com/jiachenzhu/DyT")

TASK = "digits_classify"
CLAIM = ("Derf outperforms LayerNorm, RMSNorm and DyT, and the gain comes from generalization rather than "
         "fitting: in the same TinyViT on digits_classify (3 seeds), Derf's test accuracy is >= each other "
         "norm's (paired over seeds); its final train loss is not lower than LayerNorm's (reported, not checked)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            name="derf_vit", builder="zoo_derf.model:derf_vit", task=TASK, paper=PAPER,
            description="TinyViT (patch 2, D=64, 4 layers) with every LayerNorm replaced by "
                        "Derf: weight * erf(alpha * x + shift) + bias (alpha0=0.5, shift0=0)",
            weights={"digits": WeightsSpec(
                repo="zoo-models/derf-vit-digits",
                snapshot="zoo_derf:weights/derf_vit.digits",
                files={"config.json": "1b5b3333fe2be7934d5b297a4eeffe21708d28eeffe72276fff6850a1e22852f",
                       "model.safetensors": "625f45187d8e5b98ae3a5c9c2221c43e3df7be46c66bfa90dc644b6265cbe716"},
                recipe="zoo_derf.train:digits",
                description="derf_vit trained from scratch on digits_classify's training split "
                            "(zoo_derf.train:digits, fixed steps, seed 0)")},
        ),
        ModelSpec(
            name="dyt_vit", builder="zoo_derf.model:dyt_vit", task=TASK, paper=DYT_PAPER,
            description="TinyViT with every LayerNorm replaced by DyT: weight * tanh(alpha * x) + bias "
                        "(alpha0=0.5); the point-wise baseline Derf is compared with",
        ),
        ModelSpec(
            name="rmsnorm_vit", builder="zoo_derf.model:rmsnorm_vit", task=TASK, paper=PAPER,
            description="TinyViT with every LayerNorm replaced by torch.nn.RMSNorm (a baseline of the Derf claim)",
        ),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="derf", claim=CLAIM, reproduce="zoo_derf.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
