"""zoo hooks for st-dim: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Unsupervised State Representation Learning in Atari", year=2019, arxiv="1906.08226",
              url="https://arxiv.org/abs/1906.08226", code="https://github.com/mila-iqia/atari-representation-learning",
              catalog=108)
TASK = "ssl_probe"

CLAIM = ("ST-DIM (InfoNCE between the global feature of frame t+1 and the local feature-map cells of frame t, plus "
         "local-local terms, bilinear critics) captures the game's state variables better than a generative baseline "
         "and a random encoder: on ssl_probe's 32x32 Pong-like game, the mean weighted F1 of linear probes of ball x/y "
         "and both paddles' y (16 bins) on its frozen features beats the same encoder untrained (RANDOM-CNN) by at "
         "least 0.05 and a pixel autoencoder of the same encoder trained for the same steps (3 seeds, paired)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="st_dim", builder="zoo_st_dim.model:st_dim", task=TASK, paper=PAPER,
                  description="ST-DIM: AtariARI's Nature-CNN encoder scaled to 32x32 (orthogonal init), bilinear "
                              "critics W_g (global t+1 vs local cells t) and W_l (local-local), InfoNCE over the "
                              "batch's next frames, L_GL + L_LL; ssl_views=2 (x_t, x_t+1 in ssl_probe's pong mode); "
                              "CPU default width 16, 32 features; preset='paper' for width 32, 256 features",
                  weights={"pong": WeightsSpec(
                      repo="zoo-models/st-dim-pong",
                      snapshot="zoo_st_dim:weights/st_dim.pong",
                      files={"config.json": "945100e01a8d782d0b1f500aae4544b506a55dca892c2f5b46af7e945758c3a8",
                             "model.safetensors": "8958e0bfaf6dc2f94785ea33c66cd6840850520c2b07f00bbfa9088b5cebaeee"},
                      recipe="zoo_st_dim.train:pong",
                      description="st_dim pretrained on ssl_probe's Pong frames, seed 0 (zoo_st_dim.train:pong, "
                                  "600 steps of 64 consecutive-frame pairs, Adam lr 3e-4)")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="st-dim", claim=CLAIM, reproduce="zoo_st_dim.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER)]
