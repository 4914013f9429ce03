"""zoo hooks for binary-pv: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Binary Paragraph Vectors", year=2017, arxiv="1611.01116",
              url="https://aclanthology.org/W17-2615", catalog=26)

CLAIM = ("Binary Paragraph Vectors outperform the seminal semantic-hashing method in retrieval, learning binary codes "
         "directly from raw text: trained on the 9,033 training leads of the embedding_quality wiki corpus, 32-bit "
         "Binary PV-DBOW codes inferred for the 1,000 test leads rank same-topic leads higher (Hamming-ranking "
         "precision@10 by topic, 12 topics) than a 32-bit semantic-hashing autoencoder of word counts trained on the "
         "same leads (real-valued PV-DBOW of the same dimension, random-projection hashing of TF-IDF, TF-IDF cosine "
         "and the frozen MiniLM reported only)")


def _weights() -> dict[str, WeightsSpec]:
    return {"wiki": WeightsSpec(
        repo="zoo-models/binary-pv-wiki", recipe="zoo_binary_pv.train:wiki",
        description="trained by zoo_binary_pv.train:wiki (seed 0) on the 9,033 training leads of the embedding_quality "
                    "wiki corpus: 32 bits, Krizhevsky's binarization, CPU defaults; not shipped in the package "
                    "(the fitted vocabulary goes in config.json); `zoo train binary_pv.wiki --out DIR` rebuilds it")}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="binary_pv", builder="zoo_binary_pv.model:binary_pv", task="embedding_quality",
                      paper=PAPER, weights=_weights(),
                      description="Binary PV-DBOW: a document's k-bit code round(sigmoid(z_d)) predicts its words "
                                  "(negative sampling), Krizhevsky's binarization in training; forward(doc_ids) -> "
                                  "codes in {0,1}, embed(texts) infers codes for new text with the word predictor "
                                  "frozen; CPU default 32 bits, 10 epochs; preset='paper' for 128 bits; "
                                  "binarize='none' is real-valued PV-DBOW")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="binary-pv", claim=CLAIM, reproduce="zoo_binary_pv.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
