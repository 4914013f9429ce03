"""zoo hooks for byte-recconv-sentence-ae: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Efficient Purely Convolutional Text Encoding", year=2018, arxiv="1808.01160", catalog=73)
BASE_PAPER = Paper(title="Byte-Level Recursive Convolutional Auto-Encoder for Text", year=2018, arxiv="1802.01817")

TASK = "embedding_quality"
CLAIM = ("A byte-level convolutional autoencoder whose down- and up-sampling block is shared by every level (recursive) "
         "has fewer parameters than the same network with separate weights per level and autoencodes better, and its "
         "sentence vectors are a low-resource alternative to bag-of-words: trained on the Python standard library's "
         "docstring sentences (64 bytes, 600 Adam steps), its held-out byte accuracy is >= the per-level model's and "
         "its wiki topic probe accuracy >= TF-IDF's (parameters and training seconds reported)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="byte_recconv_ae", builder="zoo_byte_recconv_sentence_ae.model:byte_recconv_ae", task=TASK,
                  paper=PAPER, weights={"stdlib": WeightsSpec(
                      repo="zoo-models/byte-recconv-ae-stdlib", recipe="zoo_byte_recconv_sentence_ae.train:stdlib",
                      snapshot="zoo_byte_recconv_sentence_ae:weights/byte_recconv_ae.stdlib",
                      files={"config.json": "eafbcd08790a2392285fff8e7f0c8a18b41050e57d95e36bf526cada4ed32548",
                             "model.safetensors": "21fe7cc0e957b282e7dd70b2927d7e0f13bbbd153fdbe438ba20d39d99cfcb89"},
                      description="trained by zoo_byte_recconv_sentence_ae.train:stdlib (seed 0): byte_recconv_ae (CPU "
                                  "preset) autoencoding the embedding_quality stdlib docstring sentences, 600 Adam "
                                  "steps; shipped in the package (297,880-byte float32 safetensors); `zoo train "
                                  "byte_recconv_ae.stdlib --out DIR` rebuilds it in a few minutes")},
                  description="byte-level recursive convolutional sentence autoencoder: byte embedding, ONE shared "
                              "residual + stride-2 conv block applied log2(L/8) times -> (64 x 8) code = 512-d sentence "
                              "vector; mirrored shared transposed-conv decoder -> (L, 256) byte logits; CPU default "
                              "C=64, L=64 bytes"),
        ModelSpec(name="byte_conv_ae_unshared", builder="zoo_byte_recconv_sentence_ae.model:byte_conv_ae_unshared",
                  task=TASK, paper=BASE_PAPER,
                  description="the comparison model of byte_recconv_ae: the same network with separate down/up weights "
                              "at every level (parameters grow with the number of levels)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="byte-recconv-sentence-ae", claim=CLAIM, task=TASK, paper=PAPER,
                      reproduce="zoo_byte_recconv_sentence_ae.reproduce:REPRODUCTION")]
