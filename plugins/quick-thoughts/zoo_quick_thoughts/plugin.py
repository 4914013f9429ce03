"""zoo hooks for Quick-Thoughts: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="An efficient framework for learning sentence representations", year=2018, arxiv="1803.02893",
              code="https://github.com/lajanugen/S2V", catalog=70)

CLAIM = ("Quick-Thoughts learns sentence vectors faster per unit of probe accuracy than a generative next-sentence "
         "model: trained on the consecutive sentences of the embedding_quality wiki leads for the same CPU time, with "
         "the same GRU encoder, its 12-topic probe accuracy beats a skip-thought encoder-decoder's and its own "
         "untrained initialisation's (TF-IDF reported as reference)")


def _weights() -> dict[str, WeightsSpec]:
    return {"wiki": WeightsSpec(
        repo="zoo-models/quick-thoughts-wiki", recipe="zoo_quick_thoughts.train:wiki",
        description="trained by zoo_quick_thoughts.train:wiki (seed 0) on the consecutive sentences of the 9,033 "
                    "training leads of embedding_quality: CPU default (word 64, GRU 128 per encoder, batch 400, "
                    "Adam 2e-3), 5 epochs; not shipped in the package (two 11.5k x 64 word tables and two GRUs, "
                    "about 1.6 M floats, 3.3 MB even in fp16); `zoo train quick_thoughts.wiki --out DIR` rebuilds it")}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="quick_thoughts", builder="zoo_quick_thoughts.model:quick_thoughts", task="embedding_quality",
                      paper=PAPER, weights=_weights(),
                      description="two GRU sentence encoders f, g; in-batch softmax over f(s).g(c) picks the "
                                  "neighbouring sentences; embedding [f(s); g(s)]; CPU default word 64 / GRU 128; "
                                  "preset='paper' for word 300 / GRU 1200, Adam 5e-4; encoder='bow' for the "
                                  "bag-of-embeddings variant")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="quick-thoughts", claim=CLAIM, reproduce="zoo_quick_thoughts.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
