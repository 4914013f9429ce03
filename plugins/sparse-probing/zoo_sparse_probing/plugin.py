"""zoo hooks for sparse-probing: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Finding Neurons in a Haystack: Case Studies with Sparse Probing", year=2023, arxiv="2305.01610",
              url="https://arxiv.org/abs/2305.01610", catalog=55)

CLAIM = ("k-sparse logistic probes on an MLP trained on digits find a dedicated neuron for some binary features (the "
         "k=1 probe's F1 close to the best k's) while other features need a sparse combination of neurons (F1 "
         "rises with k); a random-init network has no dedicated neurons and shuffled labels give chance F1")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="sparse_probe", function="zoo_sparse_probing.probing:sparse_probe", paper=PAPER,
                     inputs="(N, D) activations per layer and a binary feature: labels (binary, or multiclass with "
                            "positive=[classes]) or a concept named by feature=; at least 4 inputs of each class",
                     outputs="per layer: k, F1 per ranking method and k (held-out), the top neuron ids per method, "
                             "best_f1 and f1_at_1; a PNG of F1 vs k with out_dir",
                     description="sparse probing: rank neurons by mean difference, mutual information or L1 "
                                 "logistic regression, fit a logistic probe on the top k, sweep k = 1, 2, 4, ...")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="sparse-probing", claim=CLAIM, reproduce="zoo_sparse_probing.reproduce:REPRODUCTION",
                      task="digits_classify", paper=PAPER)]
