"""word2vec plugin: the conformance kit, the text contract, and what tells skip-gram from count vectors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_task_embedding_quality.baselines import build_baseline
from zoo_task_embedding_quality.data import TextCorpus
from zoo_word2vec.model import CPU, PAPER, word2vec_cbow, word2vec_sgns

TINY = {"dim": 8}


def test_conformance(hub):
    check_plugin("word2vec", overrides={"word2vec_sgns": TINY, "word2vec_cbow": TINY})


def _words(topic):
    return [topic + chr(ord("a") + i) for i in range(12)]


def _topics(n=1500, seed=0):
    # two topics of 12 words (aa..al, ba..bl: letters only, one token each); each sentence draws from one topic
    rng = np.random.default_rng(seed)
    words = [_words("a"), _words("b")]
    sents = [[words[k % 2][j] for j in rng.integers(0, 12, 8)] for k in range(n)]
    return TextCorpus("topics", sents, list(range(n)), [" ".join(s) for s in sents])


def test_presets_and_overrides():
    assert word2vec_sgns().dim == CPU["dim"] and word2vec_sgns(preset="paper").negative == PAPER["sgns"]["negative"]
    assert word2vec_sgns(preset="paper", dim=64).dim == 64 and word2vec_cbow().cbow and not word2vec_sgns().cbow
    with pytest.raises(ValueError, match="preset"):
        word2vec_sgns(preset="huge")


def test_fit_builds_the_vocabulary_and_embed_follows_the_contract():
    model = zoo.create("word2vec_sgns", dim=16, min_count=2, epochs=1)
    corpus = _topics()
    corpus.sentences[0].append("once")  # seen once: below min_count
    fig = model.fit(corpus, seed=0)
    assert fig["vocabulary"] == 24 and "once" not in model.index
    x = model.embed(["aa", "once", "aa bc", "AA!"])
    assert x.shape == (4, 16) and x.dtype == torch.float32
    assert not x[1].any()  # unknown word: zero row
    assert torch.allclose(x[2], (x[0] + model.embed(["bc"])[0]) / 2) and torch.equal(x[3], x[0])
    assert torch.equal(model(["aa", "once"]), x[:2])  # forward on texts == embed
    assert torch.equal(model(torch.tensor([model.index["aa"]])), x[:1])
    assert model.zoo.model_args["vocab"] == model.vocab  # save_pretrained rebuilds the fitted model


def test_fitted_model_saves_and_reloads(tmp_path):
    model = zoo.create("word2vec_cbow", dim=8, min_count=1, epochs=1)
    model.fit(_topics(200), seed=0)
    zoo.save_pretrained(model, tmp_path / "w2v")
    again = zoo.create(f"local-dir:{tmp_path / 'w2v'}", pretrained=True)
    assert again.vocab == model.vocab and torch.equal(again.embed(["ad be"]), model.embed(["ad be"]))


def _cos(x):
    x = x / x.norm(dim=1, keepdim=True)
    return x @ x.T


@pytest.mark.parametrize("name", ["word2vec_sgns", "word2vec_cbow"])
def test_learns_topics_random_vectors_do_not(name):
    corpus = _topics()
    words = _words("a") + _words("b")
    topic = np.equal.outer(np.arange(24) // 12, np.arange(24) // 12)
    same, other = topic & ~np.eye(24, dtype=bool), ~topic
    model = zoo.create(name, dim=16, min_count=1, epochs=2, sample=0)
    untrained = _cos(zoo.create(name, vocab=words, dim=16).embed(words)).numpy()
    model.fit(corpus, seed=0)
    cos = _cos(model.embed(words)).numpy()
    assert cos[same].mean() - cos[other].mean() > 0.5
    assert abs(untrained[same].mean() - untrained[other].mean()) < 0.1


def test_sgns_is_not_ppmi_svd():
    # the same corpus, dimension and window: SGNS vectors are not the SVD of the PPMI matrix. Two
    # signatures: the input vectors of skip-gram are not orthogonal-column (SVD's U * S^0.5 columns are),
    # and two seeds give different vectors (the SVD is the same up to signs for every start vector)
    corpus = _topics()
    model = zoo.create("word2vec_sgns", dim=8, min_count=1, epochs=2)
    model.fit(corpus, seed=0)
    x = model.emb.weight.detach().double()
    gram = x.T @ x
    off = gram - torch.diag(torch.diag(gram))
    assert off.abs().max() > 0.05 * torch.diag(gram).max()
    ppmi = build_baseline("ppmi_svd", data=corpus, dim=8, window=5, min_count=1)
    pg = torch.as_tensor(ppmi.vectors.T @ ppmi.vectors)
    assert (pg - torch.diag(torch.diag(pg))).abs().max() < 1e-6 * torch.diag(pg).max()
    other = zoo.create("word2vec_sgns", dim=8, min_count=1, epochs=2)
    other.fit(corpus, seed=1)
    assert not torch.allclose(model.emb.weight, other.emb.weight)


def test_the_output_vectors_are_trained_and_kept():
    model = zoo.create("word2vec_sgns", dim=8, min_count=1, epochs=1)
    model.fit(_topics(300), seed=0)
    assert model.output_vectors.shape == (24, 8) and np.abs(model.output_vectors).max() > 0


def test_quick_reproduction_runs_on_the_lee_corpus():
    import dataclasses

    from zoo.claims import run_claim
    from zoo_word2vec.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3 and REPRODUCTION.task_options == {"corpus": "wiki"}
    # MiniLM (reported only) encodes the whole vocabulary: left out of the suite's smoke run
    claim = dataclasses.replace(REPRODUCTION, rows=[r for r in REPRODUCTION.rows if "minilm" not in r.label
                                                    and "cbow" not in r.label])
    res = run_claim(claim, quick=True)
    sg, pp = res.rows["word2vec_sgns"], res.rows["ppmi_svd"]
    assert sg["ws353_coverage"]["mean"] == pp["ws353_coverage"]["mean"] > 0.1  # the same vocabulary
    assert sg["ws353"]["mean"] != pp["ws353"]["mean"] and res.verdict in ("reproduced", "not reproduced", "inconclusive")
