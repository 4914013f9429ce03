"""zoo hooks for MLP-KAN: the tiny digits and formula models, the authors' DeiT layout, and the claim."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="MLP-KAN: Unifying Deep Representation and Function Learning", year=2024, arxiv="2410.03027",
              code="https://github.com/DLYuanGod/MLP-KAN", catalog=6)

CLAIM = ("MLP-KAN is competitive on both representation and function learning without choosing between MLP and "
         "KAN. Measured (3 seeds): on digits_classify its test accuracy is within 0.02 of the better of a pure-MLP "
         "and a pure-KAN ViT of the same parameter count; on formula_regress (4 formulas) its geometric-mean "
         "relative RMSE is at most 1.5x the better of the task's MLP and KAN baselines at its parameter count")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="mlp_kan_vit", builder="zoo_mlp_kan.model:mlp_kan_vit", task="digits_classify", paper=PAPER,
                  description="ViT (patch 2, D=64, 2 blocks) whose feed-forward layer is a top-2 mixture of 4 MLP "
                              "experts and 4 FasterKAN experts"),
        ModelSpec(name="mlp_kan_formula", builder="zoo_mlp_kan.model:mlp_kan_formula", task="formula_regress",
                  paper=PAPER, description="one MLP-KAN block (D=8, 4 + 4 experts, top-2) over per-feature tokens "
                                           "and a class token, linear head: (B, d) -> (B, 1)"),
        ModelSpec(name="mlp_kan_deit", builder="zoo_mlp_kan.model:mlp_kan_deit", task=None, paper=PAPER,
                  description="the authors' deit_tiny_patch16_224_KAN (D=192, 12 blocks, hdim_kan 192, 8 experts, "
                              "top-2); load their checkpoints with `zoo convert mlp_kan_deit.official FILE --to DIR`",
                  weights={"official": WeightsSpec(
                      repo="zoo-models/mlp-kan-deit-tiny", source="official",
                      converter="zoo_mlp_kan.convert:from_official",
                      description="converted from an official MLP-KAN training checkpoint (checkpoint.pth: "
                                  "{'model': VisionKAN state dict, ...}) by zoo_mlp_kan.convert; no official "
                                  "weight file was found in the authors' repository, so the conversion is tested "
                                  "only on checkpoints written in that format by the plugin's tests")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="mlp-kan", claim=CLAIM, reproduce="zoo_mlp_kan.reproduce:REPRODUCTION",
                      task="digits_classify", paper=PAPER, budget_s=180.0)]
