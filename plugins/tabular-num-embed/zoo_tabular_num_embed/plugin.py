"""zoo hooks for tabular-num-embed: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="On Embeddings for Numerical Features in Tabular Deep Learning", year=2022, arxiv="2203.05556",
              url="https://arxiv.org/abs/2203.05556", code="https://github.com/yandex-research/rtdl-num-embeddings",
              catalog=84)
TASK = "tabular_ctr"

CLAIM = ("Embedding numerical features before the MLP (piecewise-linear encoding with quantile bins, MLP-PLE; periodic "
         "embeddings with Linear + ReLU, MLP-PLR) gives lower test RMSE than the plain MLP at matched parameters and "
         "the same training protocol, on the GBDT-friendly synthetic set (step and high-frequency effects) and on "
         "make_friedman1; diabetes and the HistGradientBoosting baseline are reported")

HOUSING = ("{name} trained on tabular_ctr's California-housing table, seed 0 (zoo_tabular_num_embed.train:{fn}: the "
           "task's split and AdamW protocol with early stopping); inputs are the table's standardised 8 features, "
           "the output the standardised target (x y_std + y_mean)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    common = ("table mode: forward(x_num, x_cat) -> (B,) / (B, d_out); build with the table's n_num, "
              "cat_cardinalities, d_out; MLP 2 x 128 ReLU (preset='paper': the authors' package defaults)")
    return [
        ModelSpec(name="mlp_plr", builder="zoo_tabular_num_embed.model:mlp_plr", task=TASK, paper=PAPER,
                  description="MLP-PLR: per-feature periodic embeddings [sin, cos](2 pi c x), c ~ N(0, sigma^2) "
                              "trainable (k=16, sigma=0.1), per-feature Linear(2k, 16) + ReLU, flattened into an MLP; "
                              + common,
                  weights={"california_housing": WeightsSpec(
                      repo="zoo-models/mlp-plr-california-housing",
                      snapshot="zoo_tabular_num_embed:weights/mlp_plr.california_housing",
                      files={"config.json": "a08862f48e3cbee7d3a1d6244e472011d716c39773a5e46bd8aedda6e4319b06",
                             "model.safetensors": "ec35655b33ece68628558b34175c1aaf61da6a5e864de2d2911776e88ddcfa3f"},
                      recipe="zoo_tabular_num_embed.train:california_housing_plr",
                      description=HOUSING.format(name="mlp_plr", fn="california_housing_plr"))}),
        ModelSpec(name="mlp_ple", builder="zoo_tabular_num_embed.model:mlp_ple", task=TASK, paper=PAPER,
                  description="MLP-PLE: piecewise-linear encoding with 32 training-quantile bins (bins='tree': "
                              "target-aware decision-tree bins) fitted by prepare(x_num, y), flattened into an MLP; "
                              + common,
                  weights={"california_housing": WeightsSpec(
                      repo="zoo-models/mlp-ple-california-housing",
                      snapshot="zoo_tabular_num_embed:weights/mlp_ple.california_housing",
                      files={"config.json": "c01784f2da77464d70cbaa4ecf9bce919be6eadd9a5b8ec11781ffa91f6c82f4",
                             "model.safetensors": "3f972122acc44f108ce74d1b3c388217b431ab9e31519b58dce00fc0162dcc0a"},
                      recipe="zoo_tabular_num_embed.train:california_housing_ple",
                      description=HOUSING.format(name="mlp_ple", fn="california_housing_ple"))}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="tabular-num-embed", claim=CLAIM, reproduce="zoo_tabular_num_embed.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
