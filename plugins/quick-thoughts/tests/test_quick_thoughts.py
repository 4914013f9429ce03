"""Quick-Thoughts plugin: the conformance kit, the in-batch classification loss, [f; g], and training on consecutive sentences."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_quick_thoughts.model import CPU, PAPER, quick_thoughts, quick_thoughts_loss
from zoo_quick_thoughts.sentences import Stream, pad
from zoo_quick_thoughts.skipthought import SkipThoughts
from zoo_task_embedding_quality.data import TextCorpus

TINY = {"word_dim": 8, "hidden": 8}


def test_conformance(hub):
    check_plugin("quick-thoughts", overrides={"quick_thoughts": TINY})


def test_presets_and_overrides():
    assert quick_thoughts().hidden == CPU["hidden"] and quick_thoughts(preset="paper").hidden == PAPER["hidden"] == 1200
    assert quick_thoughts(preset="paper").lr == 5e-4 and quick_thoughts(preset="paper", hidden=64).dim == 128
    assert quick_thoughts(encoder="bow", word_dim=16).dim == 32  # [f; g] of two sums of word vectors
    with pytest.raises(ValueError, match="preset"):
        quick_thoughts(preset="huge")
    with pytest.raises(ValueError, match="encoder"):
        quick_thoughts(encoder="lstm")


# ---------------------------------------------------------------------------- the loss (§3)

@pytest.mark.parametrize("b", [4, 7, 12])
def test_loss_closed_form_with_f_equal_g_and_orthogonal_sentences(b):
    # f == g and orthonormal sentence vectors: every other candidate scores u_i . u_j = 0, so p(c | s) = 1 / (B - 1)
    # for each of the (one or two) true neighbours and the loss is log(B - 1) exactly, whatever the scale of the
    # vectors' own norms (the diagonal is not a candidate)
    q, _ = torch.linalg.qr(torch.randn(16, 16, dtype=torch.float64))
    u = q[:b] * 3.0
    assert torch.allclose(quick_thoughts_loss(u, u), torch.tensor(math.log(b - 1), dtype=torch.float64))


def test_loss_is_the_softmax_over_the_other_sentences_of_the_batch():
    torch.manual_seed(0)
    u, v = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
    doc = torch.tensor([0, 0, 0, 1, 1])
    # by hand: row i, candidates j != i, targets: the neighbours i-1, i+1 inside the same document, equally weighted
    want = []
    for i in range(5):
        ctx = [j for j in (i - 1, i + 1) if 0 <= j < 5 and doc[j] == doc[i]]
        cand = [j for j in range(5) if j != i]
        logz = torch.logsumexp(torch.stack([u[i] @ v[j] for j in cand]), 0)
        want.append(sum(-(u[i] @ v[j] - logz) for j in ctx) / len(ctx))
    assert torch.allclose(quick_thoughts_loss(u, v, doc), torch.stack(want).mean())
    # the loss sees f and g only through the inner products f(s).g(c): a common rotation leaves it unchanged
    q, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64))
    assert torch.allclose(quick_thoughts_loss(u @ q, v @ q, doc), quick_thoughts_loss(u, v, doc))
    # ... but f and g are not interchangeable (p(c | s) normalises over candidates c, not over inputs s)
    assert not torch.allclose(quick_thoughts_loss(v, u, doc), quick_thoughts_loss(u, v, doc))


def test_negatives_carry_gradient_and_sentences_without_context_add_nothing():
    torch.manual_seed(1)
    u = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    doc = torch.tensor([0, 0, 1, 2, 2, 3])  # sentences 2 and 5 are alone in their documents
    quick_thoughts_loss(u, v, doc).backward()
    # a sentence with no context contributes no loss of its own (zero gradient through its f) but is still a
    # contrastive candidate for the others (non-zero gradient through its g): the classification is in-batch
    assert torch.equal(u.grad[2], torch.zeros(4)) and torch.equal(u.grad[5], torch.zeros(4))
    assert v.grad[2].abs().sum() > 0 and v.grad[5].abs().sum() > 0
    alone = quick_thoughts_loss(u.detach()[[2]], v.detach()[[2]])
    assert float(alone) == 0.0


def test_loss_goes_to_zero_when_f_points_at_the_true_neighbour():
    # the classifier is right with certainty when f(s) is a large multiple of g(next): the loss is ~0 (one
    # neighbour per sentence: documents of two sentences)
    q, _ = torch.linalg.qr(torch.randn(8, 8, dtype=torch.float64))
    v = q[:6]
    u = 50.0 * v[[1, 0, 3, 2, 5, 4]]
    doc = torch.tensor([0, 0, 1, 1, 2, 2])
    assert float(quick_thoughts_loss(u, v, doc)) < 1e-12
    assert float(quick_thoughts_loss(u, v, doc, context=1)) < float(quick_thoughts_loss(v, v, doc))


# ---------------------------------------------------------------------------- the encoders and [f; g]

def test_embedding_is_f_then_g_with_separate_parameters():
    model = quick_thoughts(vocab=["a", "b", "c"], word_dim=4, hidden=5)
    ids, lengths = pad([[3, 4, 5], [4]])
    x = model(ids, lengths)
    assert x.shape == (2, 10)
    assert torch.equal(x[:, :5], model.f(ids, lengths)) and torch.equal(x[:, 5:], model.g(ids, lengths))
    assert not any(p is q for p in model.f.parameters() for q in model.g.parameters())
    with torch.no_grad():
        model.g.gru.weight_hh_l0.add_(0.5)
    y = model(ids, lengths)
    assert torch.equal(y[:, :5], x[:, :5]) and not torch.allclose(y[:, 5:], x[:, 5:])


def test_embed_follows_the_text_contract():
    model = quick_thoughts(vocab=["the", "cat", "sat", "dog"], word_dim=4, hidden=6)
    x = model.embed(["The cat sat.", "The dog sat. The cat sat.", "", "!!"])
    assert x.shape == (4, 12) and x.dtype == torch.float32
    assert not x[2].any() and not x[3].any()  # no word: a zero row
    one, two = model.embed(["The dog sat."]), model.embed(["The cat sat."])
    assert torch.allclose(x[1], (one[0] + two[0]) / 2, atol=1e-6)  # a text of two sentences: their mean
    assert torch.allclose(model(["The cat sat."]), x[:1], atol=1e-6)  # forward on texts == embed


# ---------------------------------------------------------------------------- training on consecutive sentences

def _topics(docs=60, per_doc=5, seed=0):
    # two topics of 10 words (aa..aj, ba..bj); each document draws all its sentences from one topic
    rng = np.random.default_rng(seed)
    words = [[t + chr(ord("a") + i) for i in range(10)] for t in "ab"]
    sents, doc_of = [], []
    for d in range(docs):
        for _ in range(per_doc):
            sents.append([words[d % 2][j] for j in rng.integers(0, 10, 6)])
            doc_of.append(d)
    return TextCorpus("topics", sents, doc_of, [" ".join(s) + "." for s in sents])


def test_batches_are_consecutive_sentences_of_documents():
    corpus = _topics(docs=7, per_doc=3)
    stream = Stream.from_corpus(corpus, {}, 30)
    order = stream.epoch_order(np.random.default_rng(0))
    assert sorted(order) == list(range(21)) and list(order) != list(range(21))
    d = stream.doc[order]
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    assert len(starts) == 7  # each document once, as one run
    assert all(list(order[s:s + 3]) == list(range(order[s], order[s] + 3)) for s in starts)  # in reading order


def test_fit_learns_the_context_and_saves_the_vocabulary(tmp_path):
    corpus = _topics()
    model = zoo.create("quick_thoughts", word_dim=8, hidden=16, batch_size=50, lr=1e-2, min_count=1)
    init = model.fit(corpus, epochs=0, seed=0)
    assert init["train_steps"] == 0 and init["vocabulary"] == 20
    fig = model.fit(corpus, epochs=12, seed=0)
    assert fig["train_steps"] == 72 and fig["vocabulary"] == 20
    # chance is log(49) = 3.9 (50 sentences, uniform); the neighbours share a topic with half of the batch
    first = float(np.mean(model.train_log.losses[:3]))
    assert first > 3.5 and fig["final_train_loss"] < first - 0.5
    x = model.embed(corpus.texts).numpy()
    topic = np.array(corpus.doc_of) % 2
    z = x / np.linalg.norm(x, axis=1, keepdims=True)
    same = (z @ z.T)[np.equal.outer(topic, topic)].mean()
    other = (z @ z.T)[~np.equal.outer(topic, topic)].mean()
    assert same - other > 0.2
    zoo.save_pretrained(model, tmp_path / "qt")
    again = zoo.create(f"local-dir:{tmp_path / 'qt'}", pretrained=True)
    assert again.vocab == model.vocab and torch.equal(again.embed(["aa ab ac."]), model.embed(["aa ab ac."]))


def test_cpu_budget_stops_training_and_checkpoints_are_not_charged():
    corpus = _topics()
    model = quick_thoughts(word_dim=8, hidden=8, batch_size=50, min_count=1)
    calls = []
    fig = model.fit(corpus, cpu_budget_s=0.3, seed=0, checkpoint=lambda spent, seen: calls.append(spent) or {"x": 1.0},
                    checkpoint_every_s=0.1)
    assert 0.3 <= fig["train_cpu_seconds"] < 3.0 and fig["train_steps"] >= 1
    assert calls and model.train_log.checkpoints[-1]["sentences"] == fig["train_sentences"]


def test_generative_baseline_decodes_the_neighbours():
    corpus = _topics(docs=10, per_doc=3)
    model = SkipThoughts(word_dim=8, hidden=8, batch_size=30, min_count=1)
    fig = model.fit(corpus, epochs=2, seed=0)
    assert fig["train_steps"] == 2 and model.embed(["aa ab."]).shape == (1, 8)
    stream = Stream.from_corpus(corpus, model.index, 30)
    # a softmax over the vocabulary per word: an untrained decoder scores about log(V + specials) per word
    fresh = SkipThoughts(vocab=model.vocab, word_dim=8, hidden=8)
    with torch.no_grad():
        assert abs(float(fresh.loss(stream, np.arange(30))) - math.log(23)) < 0.3


@pytest.mark.slow
def test_quick_reproduction_runs():
    import dataclasses

    from zoo.claims import run_claim
    from zoo_quick_thoughts.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3 and REPRODUCTION.task_options == {"corpus": "wiki"}
    claim = dataclasses.replace(REPRODUCTION, rows=[r for r in REPRODUCTION.rows if r.label != "tfidf"])
    res = run_claim(claim, quick=True)
    qt, st, init = (res.rows[k] for k in ("quick_thoughts", "skip_thoughts", "quick_thoughts_init"))
    assert qt["dim"]["mean"] == 2 * st["dim"]["mean"] == init["dim"]["mean"] == 256
    assert qt["train_sentences"]["mean"] > 3 * st["train_sentences"]["mean"] > 0 == init["train_sentences"]["mean"]
    # 3 CPU seconds move the vectors (the 300-lead quick probe may still predict the majority topic for both)
    assert qt["mrr"]["mean"] != init["mrr"]["mean"] and res.verdict in ("reproduced", "not reproduced",
                                                                                     "inconclusive")
