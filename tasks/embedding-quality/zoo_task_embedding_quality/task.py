"""``embedding_quality``: word and sentence embeddings trained on real text, and on planted corpora with a known truth.

Contract (every text model of zoo): ``model.embed(texts: list[str]) -> (N, d)`` float tensor or ndarray, one
row per text; a word is a text of one token, and a model with no vector for a text returns a zero row
(scored as a miss). Optionally ``model.fit(corpus: TextCorpus, *, epochs=|steps=, seed=, progress=) -> dict``
trains on the mode's corpus (:class:`~zoo_task_embedding_quality.data.TextCorpus`: tokenised sentences, their
documents, raw text); its figures join the metrics. Contextual models may add ``embed_tokens(texts) -> list of
(T_i, d)`` (polysemy mode uses it). The conformance kit calls ``model(texts)``, so ``forward`` on a list of
texts returns what ``embed`` does.

Modes (``evaluate(mode=...)``, default ``model.embedding_mode`` else "word"):

* **word**: fit on a real corpus (``corpus="wiki"``: 10,033 Wikipedia leads, or ``"lee"``: gensim's Lee
  background corpus); the vocabulary is the corpus words seen ``min_count`` times. WordSim-353 and SimLex-999:
  Spearman of cosine vs human scores over the pairs inside the vocabulary (``*_coverage``: their share); Google
  analogies: 3CosAdd accuracy over the vocabulary for the questions inside it (at most ``max_questions``, a
  sample drawn with the seed; ``analogy_coverage``: the share of all 19,544 inside it).
* **sentence**: fit on the Wikipedia leads outside the fixed test split (:func:`~.data.wiki_split`); a logistic
  probe of the 12 topics trained on ``probe_train`` training leads, ``topic_acc`` on the 1,000 test leads;
  retrieval of each test lead from its short description (``recall@1``, ``recall@10``, ``mrr``); ``lee_spearman``:
  Spearman of document cosines vs the Lee et al. (2005) human ratings of 50 news documents (1,225 pairs).
  ``corpus="lee"`` fits on the Lee background corpus and reports ``lee_spearman`` only.
* **morphology** (catalog 65): planted stem x suffix corpus; ``oov_stem_acc``: the nearest corpus word of each
  held-out stem+suffix word has its stem; ``spearman`` / ``oov_spearman``: cosine vs the planted similarity
  (2 same stem, 1 same topic, 0) on corpus pairs / on pairs with an OOV word.
* **analogy** (catalog 110): planted role x gender x number grammar; 3CosAdd accuracy over the corpus
  vocabulary, ``analogy_gender`` (semantic), ``analogy_number`` (syntactic) and both.
* **polysemy** (catalog 77): ``sense_acc``: each test occurrence of an ambiguous word goes to the nearer of its two
  sense centroids (built from labelled probe occurrences; a tie counts half); the occurrence is
  ``embed_tokens(sentence)[pos]`` when the model has it, else ``embed(sentence)``. Chance is 0.5, which the
  ``static`` row scores (a word vector: the same for every occurrence).
* **svo** (catalog 76): ``svo_spearman``: Spearman of cos(embed("s v o"), embed("s landmark o")) vs the planted
  truth (1 when the landmark has the sense the object selects, else 0).

Baselines live here (:mod:`.baselines`): ``ppmi_svd`` (same corpus, window and dimension as the model),
``tfidf`` / ``tfidf_svd`` (sentence mode) and the frozen all-MiniLM-L6-v2, reported as
``"minilm (pretrained on far more data)"``. :func:`describe` lists the settings as :func:`evaluate` runs them.
"""
from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from zoo.task import Result

from . import metrics as M
from . import planted
from .baselines import BASELINES, PRETRAINED_NOTE, build_baseline
from .data import (
    WIKI_TEST_ARTICLES,
    TextCorpus,
    load_analogies,
    load_corpus,
    load_lee_similarity,
    load_wiki_articles,
    load_word_pairs,
    wiki_retrieval_set,
    wiki_split,
)

log = logging.getLogger(__name__)

__all__ = ["NAME", "MODES", "BASELINES", "MODE_BASELINES", "evaluate", "describe", "example_input", "check_output",
           "build_baseline", "MINILM_ROW"]

NAME = "embedding_quality"
MODES = ("word", "sentence", "morphology", "analogy", "polysemy", "svo")
# the baselines each mode can report, and (first ones) those it reports when evaluate gets baselines=None
MODE_BASELINES = {"word": ("ppmi_svd", "minilm"), "sentence": ("tfidf", "minilm", "tfidf_svd", "ppmi_svd"),
                  "morphology": ("ppmi_svd",), "analogy": ("ppmi_svd",), "polysemy": ("ppmi_svd", "static"),
                  "svo": ("ppmi_svd",)}
DEFAULT_BASELINES = {"word": ("ppmi_svd", "minilm"), "sentence": ("tfidf", "minilm"), "morphology": ("ppmi_svd",),
                     "analogy": ("ppmi_svd",), "polysemy": ("ppmi_svd", "static"), "svo": ("ppmi_svd",)}
MINILM_ROW = "minilm (pretrained on far more data)"
WORD_MIN_COUNT = {"lee": 2, "wiki": 5, "stdlib": 5}  # the Lee corpus has 60k tokens: count 5 would leave few benchmark words
PLANTED_MIN_COUNT = 1
WINDOW = 5  # the PPMI window unless the model states its own (model.window)
MAX_QUESTIONS = 2000
PROBE_TRAIN = 3000
MORPH_PAIRS = 2000  # random corpus-word pairs added to all same-stem pairs
TIE = 1e-9  # polysemy: centroid scores closer than this are a tie
SPLITTING = "fixed permutation (numpy default_rng(0)) of the 10,033 leads; test = its first 1,000"


def _embed(model: Any, texts: Sequence[str]) -> Any:
    out = model.embed(list(texts))
    return out if hasattr(out, "tocsr") else M.as_matrix(out, len(texts))


def _fit(model: Any, corpus: TextCorpus, *, steps: int | None, budget_s: float | None, seed: int,
         progress: bool, fit_kw: dict[str, Any]) -> dict[str, float]:
    fit = getattr(model, "fit", None)
    if fit is None:
        return {}
    params = inspect.signature(fit).parameters
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kw = dict(fit_kw)
    if steps is not None:
        key = "epochs" if "epochs" in params else "steps"
        if key not in params and not var_kw:
            raise TypeError(f"{NAME}: steps={steps} given but {type(model).__name__}.fit takes neither epochs= nor steps=")
        kw[key] = steps
    for k, v in (("seed", seed), ("progress", progress), ("budget_s", budget_s)):
        if v is not None and (k in params or var_kw):
            kw[k] = v
    t0 = time.perf_counter()
    figures = fit(corpus, **kw) or {}
    return {**{k: float(v) for k, v in figures.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
            "fit_seconds": time.perf_counter() - t0}


def _dim(model: Any) -> int:
    return int(M.as_matrix(model.embed(["the"])).shape[1])


# ---------------------------------------------------------------------------- the modes' scorers

def word_scores(model: Any, vocab: list[str], *, seed: int = 0, max_questions: int | None = MAX_QUESTIONS) -> dict:
    """WS353, SimLex and Google-analogy figures of ``model`` over the vocabulary ``vocab`` (module docstring)."""
    x = _embed(model, vocab)
    out: dict[str, float] = {}
    for name in ("ws353", "simlex"):
        pairs = load_word_pairs(name)
        rho, used = M.pair_spearman((vocab, x), pairs)
        out[name], out[f"{name}_coverage"] = rho, used / len(pairs)
    known = set(vocab)
    qs = [(sec, q) for sec, q in load_analogies() if all(w in known for w in q)]
    out["analogy_coverage"] = len(qs) / len(load_analogies())
    if max_questions is not None and len(qs) > max_questions:
        pick = np.sort(np.random.default_rng(seed).choice(len(qs), max_questions, replace=False))
        qs = [qs[i] for i in pick]
    sem = [q for sec, q in qs if not sec.startswith("gram")]
    syn = [q for sec, q in qs if sec.startswith("gram")]
    out["analogy"] = M.analogy_accuracy(vocab, x, [q for _, q in qs])[0]
    out["analogy_semantic"] = M.analogy_accuracy(vocab, x, sem)[0]
    out["analogy_syntactic"] = M.analogy_accuracy(vocab, x, syn)[0]
    out["analogy_questions"] = float(len(qs))
    return out


def sentence_scores(model: Any, *, wiki: bool = True, probe_train: int = PROBE_TRAIN, seed: int = 0) -> dict:
    """Topic probe, description -> lead retrieval (wiki) and Lee document-similarity Spearman (module docstring)."""
    docs, human = load_lee_similarity()
    out = {"lee_spearman": M.matrix_spearman(_embed(model, docs), human)}
    if not wiki:
        return out
    arts = load_wiki_articles()
    train_ids, test_ids = wiki_split()
    probe_ids = np.sort(np.random.default_rng(seed).choice(train_ids, min(probe_train, len(train_ids)), replace=False))
    topics = sorted({a["topic"] for a in arts})
    label = {t: i for i, t in enumerate(topics)}
    test_x = _embed(model, [arts[i]["extract"] for i in test_ids])
    out["topic_acc"] = M.probe_accuracy(_embed(model, [arts[i]["extract"] for i in probe_ids]),
                                        [label[arts[i]["topic"]] for i in probe_ids], test_x,
                                        [label[arts[i]["topic"]] for i in test_ids], seed=seed)
    queries, _, asked = wiki_retrieval_set()
    out.update(M.retrieval_scores(_embed(model, list(queries)), test_x, list(asked)))
    return out


def morphology_scores(model: Any, data: planted.Morphology, *, seed: int = 0) -> dict:
    words, oov = data.words, data.oov
    x, xo = _embed(model, words), _embed(model, oov)
    out = {"oov_stem_acc": M.nearest_stem_accuracy(xo, [data.stem_of[w] for w in oov], x,
                                                    [data.stem_of[w] for w in words])}
    rng = np.random.default_rng(seed)
    same = [(a, b) for i, a in enumerate(words) for b in words[i + 1:] if data.stem_of[a] == data.stem_of[b]]
    rand = [(words[i], words[j]) for i, j in rng.integers(len(words), size=(MORPH_PAIRS, 2)) if i != j]
    out["spearman"] = M.pair_spearman((words, x), [(a, b, data.truth(a, b)) for a, b in same + rand])[0]
    both = words + oov
    xb = np.concatenate([M.as_matrix(x), M.as_matrix(xo)])
    pairs = [(o, w) for o in oov for w in words if data.stem_of[w] == data.stem_of[o]]
    pairs += [(oov[i], words[j]) for i, j in zip(rng.integers(len(oov), size=MORPH_PAIRS),
                                                rng.integers(len(words), size=MORPH_PAIRS), strict=True)]
    out["oov_spearman"] = M.pair_spearman((both, xb), [(a, b, data.truth(a, b)) for a, b in pairs])[0]
    return out


def analogy_scores(model: Any, data: planted.Analogy) -> dict:
    vocab = data.corpus.vocabulary()
    x = _embed(model, vocab)
    out = {f"analogy_{kind}": M.analogy_accuracy(vocab, x, [q for k, q in data.questions if k == kind])[0]
           for kind in ("gender", "number")}
    out["analogy"] = M.analogy_accuracy(vocab, x, [q for _, q in data.questions])[0]
    return out


def sense_accuracy(reps_probe: np.ndarray, reps_test: np.ndarray, data: planted.Polysemy) -> float:
    """Nearest sense centroid per ambiguous word (probe occurrences -> centroids; test occurrences scored)."""
    p, t = M.unit_rows(reps_probe), M.unit_rows(reps_test)
    right = 0.0
    for w in data.ambiguous:
        pi = [k for k, (s, pos, _) in enumerate(data.probe) if s[pos] == w]
        ti = [k for k, (s, pos, _) in enumerate(data.test) if s[pos] == w]
        cent = np.stack([p[[k for k in pi if data.probe[k][2] == sense]].mean(0) for sense in (0, 1)])
        margin = t[ti] @ (cent[1] - cent[0])
        truth = np.array([data.test[k][2] for k in ti])
        # a tie (a static vector is equally near both centroids, up to rounding) is worth half: chance is 0.5
        tie = np.abs(margin) <= TIE
        right += float(((margin > 0) == (truth == 1))[~tie].sum()) + 0.5 * tie.sum()
    return float(right / len(data.test))


def polysemy_scores(model: Any, data: planted.Polysemy) -> dict:
    def reps(items: list[tuple[list[str], int, int]]) -> np.ndarray:
        texts = [" ".join(s) for s, _, _ in items]
        if callable(getattr(model, "embed_tokens", None)):
            return np.stack([M.as_matrix(v)[pos] for v, (_, pos, _) in zip(model.embed_tokens(texts), items, strict=True)])
        return M.as_matrix(_embed(model, texts))

    return {"sense_acc": sense_accuracy(reps(data.probe), reps(data.test), data)}


def svo_scores(model: Any, data: planted.SVO) -> dict:
    a = _embed(model, [" ".join(t) for t, _, _ in data.items])
    b = _embed(model, [f"{s} {lm} {o}" for (s, _, o), lm, _ in data.items])
    cos = (M.unit_rows(a) * M.unit_rows(b)).sum(1)
    return {"svo_spearman": M.spearman(cos, [t for *_, t in data.items])}


# ---------------------------------------------------------------------------- evaluate

def _score(mode: str, model: Any, ctx: dict[str, Any], seed: int) -> dict[str, float]:
    if mode == "word":
        return word_scores(model, ctx["vocab"], seed=seed, max_questions=ctx["max_questions"])
    if mode == "sentence":
        return sentence_scores(model, wiki=ctx["corpus_name"] == "wiki", probe_train=ctx["probe_train"], seed=seed)
    data = ctx["planted"]
    return {"morphology": lambda: morphology_scores(model, data, seed=seed), "analogy": lambda: analogy_scores(model, data),
            "polysemy": lambda: polysemy_scores(model, data), "svo": lambda: svo_scores(model, data)}[mode]()


class _Static:
    """The polysemy ``static`` row: the ambiguous word's own PPMI vector, the same for every occurrence."""

    def __init__(self, words: Any) -> None:
        self.words = words

    def embed_tokens(self, texts: list[str]) -> list[np.ndarray]:
        return [self.words.embed(t.split()) for t in texts]

    embed = None  # never called: embed_tokens is used


def evaluate(model: Any, *, mode: str | None = None, corpus: str | TextCorpus | None = None, steps: int | None = None,
             budget_s: float | None = None, seed: int = 0, baselines: Sequence[str] | None = None,
             train_model: bool | None = None, min_count: int | None = None, max_questions: int | None = MAX_QUESTIONS,
             probe_train: int = PROBE_TRAIN, progress: bool = False, **fit_kw: Any) -> Result:
    """Fit ``model`` on the mode's corpus (unless pretrained) and score it next to the baselines (module docstring).

    ``corpus``: "wiki" (default for word and sentence mode), "lee", or a ``TextCorpus`` of your own (word mode);
    planted modes generate theirs from ``seed``. ``steps`` goes to ``fit`` as ``epochs`` (or ``steps``);
    ``fit_kw`` too. ``baselines`` picks rows from ``MODE_BASELINES[mode]`` (default ``DEFAULT_BASELINES``).

    >>> r = evaluate(build_baseline("ppmi_svd", dim=50, min_count=2), mode="word", corpus="lee")  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    if not callable(getattr(model, "embed", None)):
        raise TypeError(f"{NAME}: {type(model).__name__} has no embed(texts) -> (N, d); text models implement embed "
                        f"(a word is a one-token text) and optionally fit(corpus, *, epochs, seed)")
    mode = mode or getattr(model, "embedding_mode", None) or "word"
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; choose from {', '.join(MODES)}")
    names = list(DEFAULT_BASELINES[mode] if baselines is None else baselines)
    unknown = sorted(set(names) - set(MODE_BASELINES[mode]))
    if unknown:
        raise ValueError(f"{NAME}: unknown {mode} baseline(s) {unknown}; choose from {', '.join(MODE_BASELINES[mode])}")
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    ctx: dict[str, Any] = {"max_questions": max_questions, "probe_train": probe_train}
    if mode in ("word", "sentence"):
        corpus = corpus if corpus is not None else "wiki"
        if isinstance(corpus, TextCorpus):
            text, ctx["corpus_name"] = corpus, corpus.name
        else:
            text = load_corpus(corpus, "train" if mode == "sentence" and corpus == "wiki" else "all")
            ctx["corpus_name"] = corpus
        mc = min_count if min_count is not None else WORD_MIN_COUNT.get(ctx["corpus_name"], 5)
    else:
        if corpus is not None:
            raise ValueError(f"{NAME}: {mode} mode generates its corpus from the seed; drop corpus={corpus!r}")
        ctx["planted"] = planted.PLANTED[mode](seed=seed)
        text, ctx["corpus_name"], mc = ctx["planted"].corpus, mode, min_count or PLANTED_MIN_COUNT
    ctx["vocab"] = text.vocabulary(mc)
    fig = _fit(model, text, steps=steps, budget_s=budget_s, seed=seed, progress=progress, fit_kw=fit_kw) \
        if train_model else {}
    metrics = {**fig, **_score(mode, model, ctx, seed)}
    dim = _dim(model)
    window = int(getattr(model, "window", WINDOW))
    rows: dict[str, dict[str, float]] = {}
    ppmi = None
    for name in names:
        tb = time.perf_counter()
        if name == "static":
            ppmi = ppmi or build_baseline("ppmi_svd", data=text, seed=seed, dim=dim, window=window, min_count=mc)
            base: Any = _Static(ppmi)
        elif name == "ppmi_svd":
            ppmi = ppmi or build_baseline("ppmi_svd", data=text, seed=seed, dim=dim, window=window, min_count=mc)
            base = ppmi
        else:
            base = build_baseline(name, data=text, seed=seed, dim=dim)
        scores = _score(mode, base, ctx, seed)
        rows[MINILM_ROW if name == "minilm" else name] = {**scores, "seconds": time.perf_counter() - tb}
    config = {"mode": mode, "corpus": ctx["corpus_name"], "seed": seed, "trained": train_model, "min_count": mc,
              "vocabulary": len(ctx["vocab"]), "corpus_tokens": text.num_tokens, "ppmi_window": window, "dim": dim,
              **({"minilm": PRETRAINED_NOTE} if "minilm" in names else {}),
              **{k: v for k, v in fit_kw.items() if isinstance(v, (int, float, str))}}
    n = {"word": len(ctx["vocab"]), "sentence": WIKI_TEST_ARTICLES if ctx["corpus_name"] == "wiki" else 50}.get(mode, 0)
    if mode in ("morphology", "analogy", "polysemy", "svo"):
        d = ctx["planted"]
        n = len(getattr(d, "oov", None) or getattr(d, "questions", None) or getattr(d, "test", None) or d.items)
    return Result(task=NAME, metrics=metrics, baselines=rows, n=n, seconds=time.perf_counter() - t0, config=config)


def example_input() -> list[str]:
    """Four texts, words and sentences (the conformance kit calls ``model(example_input())``)."""
    return ["king", "queen", "the cat sat on the mat", "a dog ran in the park"]


def check_output(model: Any, output: Any) -> None:
    """The contract: one finite row per text, (4, d) for the example input."""
    shape = getattr(output, "shape", None)
    if shape is None or len(shape) != 2 or shape[0] != len(example_input()):
        raise AssertionError(f"{NAME}: expected ({len(example_input())}, d) vectors, one per text, got "
                             f"{shape if shape is not None else type(output).__name__}")
    if not np.isfinite(M.as_matrix(output)).all():
        raise AssertionError(f"{NAME}: embeddings must be finite")


def describe(*, mode: str | None = None, **options: Any) -> dict[str, Any]:
    """The settings of ``mode`` (all modes when None) as :func:`evaluate` runs them with ``options``.

    >>> d = describe(mode="word"); d["corpus"], d["min_count"], d["baselines"]
    ('wiki', 5, ['ppmi_svd', 'minilm'])
    """
    params = inspect.signature(evaluate).parameters
    known = ("corpus", "min_count", "max_questions", "probe_train", "baselines")
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)} for describe; choose from {', '.join(known)}")
    if mode is None:
        return {"contract": __doc__.split("\n\n")[1].replace("\n", " "), "modes": {m: describe(mode=m, **options)
                                                                                    for m in MODES}}
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; choose from {', '.join(MODES)}")
    opt = {k: options.get(k, params[k].default) for k in known}
    base = list(DEFAULT_BASELINES[mode] if opt["baselines"] is None else opt["baselines"])
    out: dict[str, Any] = {"mode": mode, "baselines": base, "available_baselines": list(MODE_BASELINES[mode]),
                           "fit": "model.fit(corpus, epochs=steps, seed=seed) unless the model is pretrained",
                           "ppmi_svd": f"window {WINDOW} (or model.window) inside a sentence, PPMI with context "
                                       "smoothing 0.75, truncated SVD to the model's dimension, U*S^0.5"}
    if "minilm" in base:
        out["minilm"] = PRETRAINED_NOTE
    if mode in ("word", "sentence"):
        corpus = opt["corpus"] or "wiki"
        out.update(corpus=corpus, tokenisation="lowercase; runs of letters (inner apostrophes kept) or digits",
                   min_count=opt["min_count"] or WORD_MIN_COUNT.get(corpus, 5))
    if mode == "word":
        out.update(word_pairs="WordSim-353 (353 pairs), SimLex-999 (999): Spearman over in-vocabulary pairs",
                   analogies=f"Google questions-words (19,544): 3CosAdd over the vocabulary, in-vocabulary questions, "
                             f"at most {opt['max_questions']} sampled with the seed")
    elif mode == "sentence":
        out.update(split=SPLITTING, fit_corpus="the leads outside the test split (wiki), or the Lee background corpus",
                   probe=f"logistic regression (standardised features) on {opt['probe_train']} training leads drawn "
                         "with the seed, 12 topics, accuracy on the 1,000 test leads",
                   retrieval="query: the article's short description; corpus: the 1,000 test leads; cosine ranking",
                   lee="lee.cor (50 documents) vs similarities0-1.txt: Spearman over 1,225 pairs")
    else:
        gen = planted.PLANTED[mode]
        out.update(generator={k: p.default for k, p in inspect.signature(gen).parameters.items() if k != "seed"},
                   corpus="generated from the seed (planted.py)", min_count=PLANTED_MIN_COUNT)
    return out
