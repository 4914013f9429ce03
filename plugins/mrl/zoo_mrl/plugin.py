"""zoo hooks for Matryoshka Representation Learning: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Matryoshka Representation Learning", year=2022, arxiv="2205.13147",
              code="https://github.com/RAIVNLab/MRL", catalog=12)

CLAIM = ("Each truncation z[:m] of a Matryoshka embedding is at least as accurate as an independently "
         "trained fixed-feature representation of size m (digits_classify on the digits and on Fashion-MNIST "
         "at 8x8, D=64, m in {2,4,...,64})")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="mrl_resnet18", builder="zoo_mrl.model:mrl_resnet18", task=None, paper=PAPER,
                  description="timm ResNet-18 (512-d) with Matryoshka heads at 8, 16, ..., 512 (ImageNet-size)"),
        ModelSpec(name="mrl_digits_cnn", builder="zoo_mrl.model:mrl_digits_cnn", task="digits_classify",
                  paper=PAPER, description="DigitsCNN with a 64-d Matryoshka embedding, heads at 2, 4, ..., 64",
                  weights={"digits": WeightsSpec(
                      repo="zoo-models/mrl-digits-cnn",
                      snapshot="zoo_mrl:weights/mrl_digits_cnn.digits",
                      files={"config.json": "b8b5bbd27e782b4e838d4e49c7aafb64811486706ebf78df506e002369799d61",
                             "model.safetensors": "52db62a255a61b9afd9949eb0a898b4e5720cdcae0f8267e49814be724058f2b"},
                      recipe="zoo_mrl.train:digits",
                      description="mrl_digits_cnn trained on digits_classify by zoo_mrl.train:digits "
                                  "(600 AdamW steps, seed 0); the card lists accuracy at every granularity")}),
        ModelSpec(name="mrl_e_digits_cnn", builder="zoo_mrl.model:mrl_digits_cnn", task="digits_classify",
                  paper=PAPER, defaults={"efficient": True},
                  description="MRL-E: DigitsCNN, 64-d embedding, one weight-tied classifier read at 2, 4, ..., 64"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="mrl", claim=CLAIM, reproduce="zoo_mrl.reproduce:REPRODUCTION",
                      task="digits_classify", paper=PAPER)]
