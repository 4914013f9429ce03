"""zoo hooks for tabular-num-embed: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="On Embeddings for Numerical Features in Tabular Deep Learning", year=2022, arxiv="2203.05556",
              url="https://arxiv.org/abs/2203.05556", code="https://github.com/yandex-research/rtdl-num-embeddings",
              catalog=84)
TASK = "tabular_ctr"

CLAIM = ("Embedding numerical features before the MLP (piecewise-linear encoding with quantile bins, MLP-PLE; periodic "
         "embeddings with Linear + ReLU, MLP-PLR) gives lower test RMSE than the plain MLP at matched parameters and "
         "the same training protocol, on the GBDT-friendly synthetic set (step and high-frequency effects) and on "
         "make_friedman1; diabetes and the HistGradientBoosting baseline are reported")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    common = ("table mode: forward(x_num, x_cat) -> (B,) / (B, d_out); build with the table's n_num, "
              "cat_cardinalities, d_out; MLP 2 x 128 ReLU (preset='paper': the authors' package defaults)")
    return [
        ModelSpec(name="mlp_plr", builder="zoo_tabular_num_embed.model:mlp_plr", task=TASK, paper=PAPER,
                  description="MLP-PLR: per-feature periodic embeddings [sin, cos](2 pi c x), c ~ N(0, sigma^2) "
                              "trainable (k=16, sigma=0.1), per-feature Linear(2k, 16) + ReLU, flattened into an MLP; "
                              + common),
        ModelSpec(name="mlp_ple", builder="zoo_tabular_num_embed.model:mlp_ple", task=TASK, paper=PAPER,
                  description="MLP-PLE: piecewise-linear encoding with 32 training-quantile bins (bins='tree': "
                              "target-aware decision-tree bins) fitted by prepare(x_num, y), flattened into an MLP; "
                              + common),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="tabular-num-embed", claim=CLAIM, reproduce="zoo_tabular_num_embed.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
