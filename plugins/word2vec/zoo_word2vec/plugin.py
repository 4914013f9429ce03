"""zoo hooks for word2vec: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Distributed Representations of Words and Phrases and their Compositionality", year=2013,
              arxiv="1310.4546", code="https://code.google.com/archive/p/word2vec/", catalog=110)

CLAIM = ("Skip-gram with negative sampling learns word vectors with high analogy accuracy in seconds: trained on the "
         "embedding_quality wiki corpus (10,033 Wikipedia leads, 792k tokens) it answers more in-vocabulary Google "
         "analogies (3CosAdd) than PPMI+SVD count vectors of the same dimension, window and corpus, is no worse on "
         "WordSim-353, and trains in under a minute on one CPU core (CBOW and the frozen MiniLM reported only)")


def _weights() -> dict[str, WeightsSpec]:
    return {"wiki": WeightsSpec(
        repo="zoo-models/word2vec-sgns-wiki", recipe="zoo_word2vec.train:wiki",
        description="trained by zoo_word2vec.train:wiki (seed 0) on the embedding_quality wiki corpus: skip-gram, "
                    "d=100, window 5, 5 negatives, t=1e-3, 5 epochs, min_count 5; not shipped in the package "
                    "(12,411 x 100 floats); `zoo train word2vec_sgns.wiki --out DIR` rebuilds it in about a minute")}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="word2vec_sgns", builder="zoo_word2vec.model:word2vec_sgns", task="embedding_quality",
                  paper=PAPER, weights=_weights(),
                  description="skip-gram with negative sampling (word2vec.c's loop, numba-compiled): dynamic window, "
                              "frequent-word subsampling, unigram^0.75 negatives; CPU default d=100, window 5, 5 "
                              "epochs; preset='paper' for d=300, window 10, 15 negatives, t=1e-5"),
        ModelSpec(name="word2vec_cbow", builder="zoo_word2vec.model:word2vec_cbow", task="embedding_quality",
                  paper=PAPER,
                  description="CBOW with negative sampling (mean of the window's vectors predicts the word); CPU "
                              "default d=100, window 5, 5 epochs; preset='paper' for d=300, window 5, t=1e-5"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="word2vec", claim=CLAIM, reproduce="zoo_word2vec.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
