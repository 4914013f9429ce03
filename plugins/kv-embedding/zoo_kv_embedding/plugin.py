"""zoo hooks for KV-Embedding: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="KV-Embedding: Training-free Text Embedding via Internal KV Re-routing in Decoder-only LLMs",
              year=2026, arxiv="2601.01046", catalog=47)

CLAIM = ("Re-routing the final token's key/value states as a prefix at the layers chosen by intrinsic dimension makes "
         "better training-free embeddings than pooling the same frozen decoder LM: with a word-level GPT trained as a "
         "plain language model on the 9,033 training Wikipedia leads of embedding_quality (one per seed), KV-Embedding "
         "(mean pooling) retrieves each test lead from its short description with a higher MRR than mean pooling and "
         "than last-token pooling of the same frozen LM (TF-IDF and the frozen MiniLM reported as references)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="kv_embedding", builder="zoo_kv_embedding.model:kv_embedding", task="embedding_quality",
                  paper=PAPER, weights={"wiki": WeightsSpec(
                      repo="zoo-models/kv-embedding-wiki", recipe="zoo_kv_embedding.train:wiki",
                      description="the word-level GPT (4,096 words, d=64, 4 blocks) trained by "
                                  "zoo_kv_embedding.train:wiki (seed 0) as a next-word model on the 9,033 training "
                                  "leads of the embedding_quality wiki corpus, then frozen, with its re-routed blocks "
                                  "picked by TwoNN; not shipped in the package; `zoo train kv_embedding.wiki --out DIR` "
                                  "rebuilds it in one to two minutes")},
                  description="KV-Embedding on a frozen word-level GPT: the last token's key/value prepended as a "
                              "prefix at the blocks of lowest TwoNN intrinsic dimension, mean pooling (preset='paper': "
                              "mean + last-token pooling); fit() trains the LM (next-word prediction) and freezes it"),
        ModelSpec(name="kv_embedding_lm", builder="zoo_kv_embedding.model:kv_embedding_lm", task="embedding_quality",
                  paper=PAPER,
                  description="the same frozen word-level GPT without re-routing: the paper's training-free "
                              "baselines, mean pooling (default) or last-token pooling (pooling='last')"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="kv-embedding", claim=CLAIM, reproduce="zoo_kv_embedding.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
