"""zoo hooks for concrete sentence spaces: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Concrete Sentence Spaces for Compositional Distributional Models of Meaning", year=2011,
              arxiv="1101.0309", catalog=76)

CLAIM = ("Sentences of any grammatical structure live in one space and are comparable by inner product: in N (x) N "
         "built from a planted SVO corpus, the inner products of transitive sentences with intransitive landmark "
         "sentences (and the reverse) rank the landmark of the right verb sense first (cross-structure Spearman "
         ">= 0.5 of its 0.866 ceiling, and >= the additive baseline's + 0.1), and the transitive sentences "
         "disambiguate landmark verbs in embedding_quality's svo mode no worse than the additive baseline (PPMI+SVD "
         "mean) - 0.02")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="concrete_sentence_space", builder="zoo_concrete_sentence_space.model:concrete_sentence_space",
        task="embedding_quality", paper=PAPER,
        description="corpus co-occurrence noun vectors (P(c|w)/P(c), 100-word basis); transitive verb = sum of "
                    "subj (x) obj over its corpus pairs, sentence = verb (.) (subj (x) obj); intransitive verb = sum "
                    "of its subjects, sentence = (verb (.) subj) (x) 1/sqrt(d); sentence_vec -> (d*d,), cosine; "
                    "preset='paper' for a 2,000-word basis")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="concrete-sentence-space", claim=CLAIM,
                      reproduce="zoo_concrete_sentence_space.reproduce:REPRODUCTION", task="embedding_quality",
                      paper=PAPER)]
