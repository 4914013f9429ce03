"""zoo hooks for din: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Deep Interest Network for Click-Through Rate Prediction", year=2018, arxiv="1706.06978",
              url="https://arxiv.org/abs/1706.06978", code="https://github.com/zhougr1993/DeepInterestNetwork", catalog=78)
TASK = "tabular_ctr"

CLAIM = ("Adaptive, ad-dependent interest representations (DIN's local activation unit: weighted sum pooling of the "
         "behaviour embeddings with weights computed from behaviour and ad, no softmax) beat the fixed-length "
         "sum-pooled Embedding&MLP base model in test AUC at matched parameters and equal epochs, on a synthetic "
         "multi-interest click log and on MovieLens-100k (click = rating >= 4, each user's last ratings held out); "
         "Dice vs PReLU and mini-batch aware L2 vs none are reported as ablation rows")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="din", builder="zoo_din.model:din", task=TASK, paper=PAPER,
                  description="DIN: item embeddings (16-d on CPU, 64 with preset='paper'); local activation unit "
                              "MLP([e_h, e_a, e_h - e_a, e_h * e_a]) -> 36 Dice -> 1, unnormalised weights over the "
                              "history; MLP 200-80 Dice on [interest, ad, dense]; mini-batch aware L2 (lambda 0.01) "
                              "via extra_loss; ctr mode: build with n_items, n_dense of the dataset",
                  weights={"movielens": WeightsSpec(
                      repo="zoo-models/din-movielens",
                      snapshot="zoo_din:weights/din.movielens",
                      files={"config.json": "1d7faae6a5c30d8d35027b1a9aa1b62c4196c16315a8c9100296bdc6bf869a8f",
                             "model.safetensors": "5a10b054f03eb86741cb218389ca460a261041497c2114084f0932f4626d6849"},
                      recipe="zoo_din.train:movielens",
                      description="din trained on tabular_ctr's MovieLens-100k click log (rating >= 4), seed 0 "
                                  "(zoo_din.train:movielens: the task's ctr protocol, 2 epochs); item ids are "
                                  "ctr_data('movielens')'s")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="din", claim=CLAIM, reproduce="zoo_din.reproduce:REPRODUCTION", task=TASK, paper=PAPER)]
