"""fasttext-subword plugin: the conformance kit, the text contract, and what tells subword skip-gram from skip-gram."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_fasttext_subword.model import CPU, PAPER, fasttext_subword
from zoo_nn.fasttext import char_ngrams, fnv1a
from zoo_task_embedding_quality import planted
from zoo_task_embedding_quality.data import TextCorpus
from zoo_task_embedding_quality.task import morphology_scores

TINY = {"dim": 8, "bucket": 1000}


def test_conformance(hub):
    check_plugin("fasttext-subword", overrides={"fasttext_subword": TINY})


def test_presets_and_overrides():
    assert CPU["bucket"] == 200_000 and PAPER["bucket"] == 2_000_000 and PAPER["dim"] == 300 and PAPER["sample"] == 1e-4
    m = fasttext_subword(dim=16, bucket=100, minn=2, maxn=4)
    assert (m.dim, m.bucket, m.minn, m.maxn, m.lr, m.window) == (16, 100, 2, 4, CPU["lr"], CPU["window"])
    with pytest.raises(ValueError, match="preset"):
        fasttext_subword(preset="huge")
    with pytest.raises(ValueError, match="combine"):
        fasttext_subword(bucket=10, combine="max")


def _corpus(n=1500, seed=0):
    # two topics of 12 words (aa..al, ba..bl); each sentence draws from one topic
    rng = np.random.default_rng(seed)
    words = [[t + chr(ord("a") + i) for i in range(12)] for t in "ab"]
    sents = [[words[k % 2][j] for j in rng.integers(0, 12, 8)] for k in range(n)]
    return TextCorpus("topics", sents, list(range(n)), [" ".join(s) for s in sents])


def _rows(word, num_words, bucket, own=None):
    # the rows of §3.2 computed here from the n-grams and the hash, independently of the model's code path
    return ([own] if own is not None else []) + [num_words + fnv1a(g.encode()) % bucket for g in char_ngrams(word, 3, 6)]


@pytest.mark.parametrize("combine", ["mean", "sum"])
def test_an_unseen_word_is_its_ngram_vectors_combined(combine):
    model = zoo.create("fasttext_subword", dim=8, bucket=500, min_count=1, epochs=1, combine=combine)
    model.fit(_corpus(300), seed=0)
    w = model.emb.weight.detach()
    v = len(model.vocab)
    for word in ("unseenword", "aaz", "ad"):  # "ad" is in the vocabulary: its own row joins its n-grams
        rows = _rows(word, v, 500, model.index.get(word))
        want = w[rows].sum(0) / (len(rows) if combine == "mean" else 1)
        assert torch.allclose(model.embed([word])[0], want, atol=1e-6), word
    # sum and mean differ by the number of rows only: the same cosines
    assert model.embed(["unseenword"]).abs().sum() > 0


def test_fit_embed_contract_and_sisg_minus():
    model = zoo.create("fasttext_subword", dim=16, bucket=1000, min_count=2, epochs=1)
    corpus = _corpus()
    corpus.sentences[0].append("once")
    fig = model.fit(corpus, seed=0)
    assert fig["vocabulary"] == 24 and "once" not in model.index and fig["rows_per_word"] == 4  # "aa": itself, <aa, aa>, <aa>
    assert model.emb.weight.shape == (24 + 1000, 16)
    x = model.embed(["aa", "once", "aa bc", "AA!"])
    assert x.shape == (4, 16) and x[1].abs().sum() > 0  # a word under min_count still gets a vector
    assert torch.allclose(x[2], (x[0] + model.embed(["bc"])[0]) / 2) and torch.equal(x[3], x[0])
    assert torch.equal(model(["aa", "once"]), x[:2])
    null = zoo.create("fasttext_subword", dim=16, bucket=1000, min_count=2, epochs=1, oov_vectors=False)
    null.fit(corpus, seed=0)
    assert not null.embed(["once"]).any() and torch.equal(null.embed(["aa"]), x[:1])  # the paper's sisg-


def test_fitted_model_saves_and_reloads(tmp_path):
    model = zoo.create("fasttext_subword", dim=8, bucket=300, min_count=1, epochs=1)
    model.fit(_corpus(200), seed=0)
    zoo.save_pretrained(model, tmp_path / "ft")
    again = zoo.create(f"local-dir:{tmp_path / 'ft'}", pretrained=True)
    assert again.vocab == model.vocab and torch.equal(again.embed(["ad be", "zzq"]), model.embed(["ad be", "zzq"]))


def _morph(sentences=4000):
    return planted.morphology(seed=0, sentences=sentences)


def test_unseen_forms_sit_next_to_their_stem_where_skipgram_has_nothing():
    # the quick reproduction: the planted stem x suffix corpus, fastText vs skip-gram at the same settings
    data = _morph()
    ft = zoo.create("fasttext_subword", dim=32, bucket=20_000, min_count=1, epochs=3)
    sg = zoo.create("word2vec_sgns", dim=32, min_count=1, epochs=3)
    ft.fit(data.corpus, seed=0)
    sg.fit(data.corpus, seed=0)
    f, s = morphology_scores(ft, data), morphology_scores(sg, data)
    assert s["oov_stem_acc"] == 0 and s["oov_spearman"] == 0  # skip-gram: no vector for an unseen form
    assert f["oov_stem_acc"] > 0.3 and f["oov_spearman"] > 0.5  # chance: 4 of 320 words share the stem

    def neighbour_cos(model):  # cosine of each unseen form with its stem's seen forms (its morphological neighbours)
        xo, xw = model.embed(data.oov), model.embed(data.words)
        cos = torch.nn.functional.normalize(xo, dim=1) @ torch.nn.functional.normalize(xw, dim=1).T
        same = np.equal.outer([data.stem_of[w] for w in data.oov], [data.stem_of[w] for w in data.words])
        return float(cos[torch.from_numpy(same)].mean())

    assert neighbour_cos(sg) == 0 and neighbour_cos(ft) > 0.5


def test_training_gives_unseen_forms_their_stems_topic():
    # n-gram overlap alone (the untrained matrix) puts an unseen form near its stem but knows no topic: training
    # moves same-topic words together, unseen forms included (what the morphology check of reproduce measures)
    data = _morph()
    trained = zoo.create("fasttext_subword", dim=32, bucket=20_000, min_count=1, epochs=3)
    untrained = zoo.create("fasttext_subword", dim=32, bucket=20_000, min_count=1, epochs=0)
    trained.fit(data.corpus, seed=0)
    untrained.fit(data.corpus, seed=0)

    def topic_gap(model):
        xo = model.embed(data.oov)
        xw = model.embed(data.words)
        cos = (xo / xo.norm(dim=1, keepdim=True)) @ (xw / xw.norm(dim=1, keepdim=True)).T
        t_o = np.array([data.topic_of[w] for w in data.oov])
        t_w = np.array([data.topic_of[w] for w in data.words])
        s_o = np.array([data.stem_of[w] for w in data.oov])
        s_w = np.array([data.stem_of[w] for w in data.words])
        same_topic = torch.from_numpy(np.equal.outer(t_o, t_w) & ~np.equal.outer(s_o, s_w))
        return float(cos[same_topic].mean() - cos[~torch.from_numpy(np.equal.outer(t_o, t_w))].mean())

    assert topic_gap(trained) > 0.1 and abs(topic_gap(untrained)) < 0.05


@pytest.mark.slow
def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_fasttext_subword.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3 and REPRODUCTION.task_options == {"corpus": "wiki"}
    res = run_claim(REPRODUCTION, quick=True, seeds=(0,))
    ft, sg = res.rows["fasttext_subword"], res.rows["word2vec_sgns"]
    assert ft["ws353_all_embedded"]["mean"] == 1.0 > sg["ws353_all_embedded"]["mean"]
    assert sg["morph_oov_stem_acc"]["mean"] == 0 < ft["morph_oov_stem_acc"]["mean"]
