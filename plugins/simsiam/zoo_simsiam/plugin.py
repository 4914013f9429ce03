"""zoo hooks for simsiam: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Exploring Simple Siamese Representation Learning", year=2021, arxiv="2011.10566",
              url="https://arxiv.org/abs/2011.10566", code="https://github.com/facebookresearch/simsiam", catalog=75)
TASK = "ssl_probe"

CLAIM = ("SimSiam learns meaningful representations without negative pairs, large batches or a momentum encoder: its "
         "frozen features probe better than the same encoder at initialisation; without the stop-gradient it "
         "collapses (the per-dimension std of its l2-normalised output drops towards 0 and kNN accuracy falls)")


FASHION_MNIST = WeightsSpec(repo="zoo-models/simsiam-cnn-fashion-mnist",
                            snapshot="zoo_simsiam:weights/simsiam_cnn.fashion_mnist",
                            files={"config.json": "2e4a993af9587c069a155059067f863bc85a57e11bf85ea235962c4a8123760c",
                                   "model.safetensors": "ef2b49f1b20b90f552a9e3765da9d24815249bcd93c698b5925cedea3bcbf28f"},
                            recipe="zoo_simsiam.train:fashion_mnist",
                            description="pretrained by ssl_probe on 10k unlabeled Fashion-MNIST images, 600 steps; "
                                        "Fashion-MNIST test: linear probe 0.792, kNN 0.763")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="simsiam_cnn", builder="zoo_simsiam.model:simsiam", task=TASK, paper=PAPER,
                  description="SimSiam: the task's small BN CNN backbone, 3-layer BN projection MLP (256-d), 2-layer "
                              "bottleneck predictor (64-d, ratio 1/4), symmetrised negative cosine with stop-gradient "
                              "(stop_gradient=False for the ablation); AdamW lr 1e-3, wd 1e-4, cosine, predictor at a "
                              "fixed lr (optimizer='sgd': the paper's SGD lr 0.05 x batch/256, momentum 0.9)",
                  weights={"fashion_mnist": FASHION_MNIST}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="simsiam", claim=CLAIM, reproduce="zoo_simsiam.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER)]
