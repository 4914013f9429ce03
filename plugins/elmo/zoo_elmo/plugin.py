"""zoo hooks for ELMo: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Deep contextualized word representations", year=2018, arxiv="1802.05365",
              code="https://github.com/allenai/bilm-tf", catalog=77)

CLAIM = ("Contextual representations from a biLM beat static word vectors, and a task-learned scalar mix of all "
         "biLM layers beats the top layer alone: on the embedding_quality polysemy corpus (ambiguous words whose "
         "sense is set by their context), the sense accuracy of the mix learned on the labelled probe half is at "
         "least the top layer's + 0.005 and the static vector's + 0.1 (same biLM, same probe and test occurrences)")


def _weights() -> dict[str, WeightsSpec]:
    return {"wiki": WeightsSpec(
        repo="zoo-models/elmo-wiki", recipe="zoo_elmo.train:wiki",
        description="the CPU-default biLM trained by zoo_elmo.train:wiki (seed 0) on the embedding_quality wiki "
                    "training leads (the 9,033 outside the test split; softmax vocabulary at min_count 5) for a "
                    "budget of 180 s on one core; scored in sentence mode; not shipped in the package: "
                    "`zoo train elmo.wiki --out DIR` rebuilds it")}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="elmo", builder="zoo_elmo.model:elmo", task="embedding_quality", paper=PAPER, weights=_weights(),
        description="ELMo biLM: char-CNN token encoder (16-d chars, widths 1-7, 2 highway, projection), forward and "
                    "backward 2-layer LSTM LMs with projections and a residual, tied softmax; embed_tokens gives "
                    "gamma * sum_j softmax(s)_j h_j (fit_mix learns s, gamma on a labelling). CPU default: 92 "
                    "filters, 64 cells / 32-d projections, 1 epoch; preset='paper' for 2048 filters, 4096 / 512")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="elmo", claim=CLAIM, reproduce="zoo_elmo.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
