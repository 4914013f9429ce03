"""zoo hooks for fastText (subword skip-gram): specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Enriching Word Vectors with Subword Information", year=2017, arxiv="1607.04606",
              code="https://github.com/facebookresearch/fastText", catalog=65)

CLAIM = ("Words written as bags of character n-grams get vectors even when unseen in training, where plain skip-gram "
         "has none: on the planted stem x suffix corpus the nearest corpus word of an unseen stem+suffix form has its "
         "stem (skip-gram with the same settings cannot embed it) and training, beyond n-gram overlap, gives it its "
         "stem's topic; on the Wikipedia leads (792k tokens) fastText scores WordSim-353 over all 353 pairs, the "
         "out-of-vocabulary ones included, above skip-gram with zero vectors for unseen words (the paper's "
         "comparison), while staying no worse on the in-vocabulary pairs")


def _weights() -> dict[str, WeightsSpec]:
    return {"wiki": WeightsSpec(
        repo="zoo-models/fasttext-subword-wiki", recipe="zoo_fasttext_subword.train:wiki",
        description="trained by zoo_fasttext_subword.train:wiki (seed 0) on the embedding_quality wiki corpus: subword "
                    "skip-gram, d=100, n-grams 3-6 in 200,000 buckets, window 5, 5 negatives, t=1e-3, lr 0.05, 5 "
                    "epochs, min_count 5; not shipped in the package ((12,411 + 200,000) x 100 floats); `zoo train "
                    "fasttext_subword.wiki --out DIR` rebuilds it in about a minute")}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="fasttext_subword", builder="zoo_fasttext_subword.model:fasttext_subword",
                  task="embedding_quality", paper=PAPER, weights=_weights(),
                  description="skip-gram with negative sampling over words as bags of character n-grams (3-6, "
                              "FNV-1a hashed into buckets; numba-compiled loop); vectors for unseen words from their "
                              "n-grams; CPU default d=100, 200k buckets, 5 epochs; preset='paper' for d=300, 2M "
                              "buckets, t=1e-4"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="fasttext-subword", claim=CLAIM, reproduce="zoo_fasttext_subword.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
