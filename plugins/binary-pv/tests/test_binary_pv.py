"""binary-pv plugin: the conformance kit, binary codes, the Hamming ranking, the straight-through gradient, and codes
that separate planted topics where random codes do not."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_binary_pv.hashing import (
    RandomProjectionHash,
    chance_precision,
    hamming_distances,
    precision_at_k_by_label,
    topic_precision,
)
from zoo_binary_pv.model import CPU, PAPER, binarize, binary_pv, straight_through_round
from zoo_task_embedding_quality.data import TextCorpus

TINY = {"bits": 8, "epochs": 1}


def test_conformance(hub):
    check_plugin("binary-pv", overrides={"binary_pv": TINY})


def _topics(n=200, seed=0, length=30):
    # two topics of 12 words each (aa..al, ba..bl) plus 4 shared words; document d draws from topic d % 2
    rng = np.random.default_rng(seed)
    words = [[t + chr(ord("a") + i) for i in range(12)] for t in "ab"]
    shared = ["the", "of", "and", "in"]
    docs = []
    for d in range(n):
        pool = words[d % 2] + shared
        docs.append([pool[j] for j in rng.integers(0, len(pool), length)])
    return TextCorpus("topics", docs, list(range(n)), [" ".join(s) for s in docs]), np.arange(n) % 2


def test_presets_and_overrides():
    assert binary_pv().bits == CPU["bits"] == 32 and binary_pv(preset="paper").bits == PAPER["bits"] == 128
    assert binary_pv(bits=16, binarize="ste").binarize == "ste" and binary_pv().binarize == CPU["binarize"]
    with pytest.raises(ValueError, match="preset"):
        binary_pv(preset="huge")
    with pytest.raises(ValueError, match="binarize"):
        binary_pv(binarize="sign")


def test_straight_through_rounding_passes_gradients():
    z = torch.tensor([-2.0, -0.1, 0.3, 3.0], requires_grad=True)
    s = torch.sigmoid(z)
    b = binarize(z, "ste", training=True)
    assert torch.equal(b.detach(), torch.tensor([0.0, 0.0, 1.0, 1.0]))  # forward: rounded
    (b * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    # backward: the sigmoid's gradient, as if there were no rounding (plain rounding would give zeros)
    assert torch.allclose(z.grad, (s * (1 - s)).detach() * torch.tensor([1.0, 2.0, 3.0, 4.0]))
    z2 = torch.tensor([0.3], requires_grad=True)
    torch.round(torch.sigmoid(z2)).sum().backward()
    assert z2.grad.abs().sum() == 0  # what the estimator is for
    x = torch.tensor([0.2, 0.6], requires_grad=True)
    straight_through_round(x).sum().backward()
    assert torch.equal(x.grad, torch.ones(2))


def test_binarizations_in_training_and_at_test():
    z = torch.linspace(-3, 3, 64).view(8, 8)
    for how in ("ste", "krizhevsky", "noise"):
        assert set(binarize(z, how, training=False).unique().tolist()) <= {0.0, 1.0}
    noisy = binarize(z, "noise", training=True, noise_std=4.0, generator=torch.Generator().manual_seed(0))
    assert ((noisy > 0) & (noisy < 1)).any()  # noise mode trains on soft codes, rounded only at test
    gen = torch.Generator().manual_seed(0)
    kinds = {bool(((k := binarize(z, "krizhevsky", training=True, generator=gen)) == k.round()).all()) for _ in range(40)}
    assert kinds == {True, False}  # Krizhevsky's: some batches rounded, some not
    assert torch.equal(binarize(z, "none", training=False), z)


def test_codes_are_binary_and_inference_is_deterministic():
    corpus, _ = _topics(60)
    model = zoo.create("binary_pv", bits=16, epochs=2, min_count=1)
    fig = model.fit(corpus, seed=0)
    assert fig["documents"] == 60 and fig["vocabulary"] == 28
    codes = model(torch.arange(60))
    assert codes.shape == (60, 16) and set(codes.unique().tolist()) <= {0.0, 1.0}
    x = model.embed(["aa ab ac the", "qwerty", "ba bb"])
    assert x.shape == (3, 16) and x.dtype == torch.float32 and set(x.unique().tolist()) <= {0.0, 1.0}
    assert not x[1].any()  # no known word: a zero row
    assert torch.equal(model.embed(["aa ab ac the", "qwerty", "ba bb"]), x)  # seeded: the same texts, the same codes
    assert model.zoo.model_args["num_docs"] == 60 and model.zoo.model_args["vocab"] == model.vocab
    real = zoo.create("binary_pv", bits=16, epochs=2, min_count=1, binarize="none")
    real.fit(corpus, seed=0)
    assert not set(real(torch.arange(60)).unique().tolist()) <= {0.0, 1.0}  # the real-valued PV-DBOW baseline


def test_hamming_distance_is_the_count_of_differing_bits():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, (7, 12)), rng.integers(0, 2, (5, 12))
    brute = np.array([[sum(int(x != y) for x, y in zip(p, q, strict=True)) for q in b] for p in a])
    assert np.array_equal(hamming_distances(a, b), brute)


def _brute_precision(codes, labels, k):
    # every order of the other items is equally likely among ties: average the top-k precision over all of them
    n = len(labels)
    out = []
    for q in range(n):
        others = [j for j in range(n) if j != q]
        d = {j: int((codes[q] != codes[j]).sum()) for j in others}
        vals = []
        for perm in itertools.permutations(others):
            rank = {j: r for r, j in enumerate(perm)}
            top = sorted(others, key=lambda j: (d[j], rank[j]))[:k]
            vals.append(np.mean([labels[j] == labels[q] for j in top]))
        out.append(np.mean(vals))
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hamming_ranking_precision_equals_brute_force_over_tie_orders(seed):
    rng = np.random.default_rng(seed)
    codes, labels = rng.integers(0, 2, (7, 3)), rng.integers(0, 3, 7)  # 3 bits: many ties
    for k in (1, 3, 5):
        assert np.allclose(precision_at_k_by_label(hamming_distances(codes), labels, k), _brute_precision(codes, labels, k))


def test_precision_ignores_item_order_and_knows_chance():
    # ties broken by index would reward a corpus stored by label; the expected tie-break does not
    codes = np.zeros((6, 4))
    labels = np.array([0, 0, 0, 1, 1, 1])
    assert np.allclose(precision_at_k_by_label(hamming_distances(codes), labels, 2), 2 / 5)
    assert chance_precision(labels) == pytest.approx(2 / 5)
    with pytest.raises(ValueError, match="0 < k < n"):
        precision_at_k_by_label(hamming_distances(codes), labels, 6)


def test_planted_topics_separate_and_random_codes_do_not():
    corpus, labels = _topics(200)
    model = zoo.create("binary_pv", bits=16, epochs=10, min_count=1, lr=0.05, batch_size=256)
    model.fit(corpus, seed=0)
    trained_codes = model(torch.arange(200))
    assert topic_precision(trained_codes, labels, k=10) > 0.9
    fresh, fresh_labels = _topics(40, seed=5)
    assert topic_precision(model.embed(fresh.texts), fresh_labels, k=5) > 0.85  # codes inferred for unseen documents
    rand = zoo.create("binary_pv", vocab=model.vocab, num_docs=200, counts=model.counts, bits=16)  # untrained codes
    assert topic_precision(rand(torch.arange(200)), labels, k=10) < 0.65  # chance is 99/199


def test_random_projection_hash_is_sign_of_projections():
    corpus, labels = _topics(100)
    rp = RandomProjectionHash(16)
    rp.fit(corpus, seed=0)
    x = rp.embed(corpus.texts[:10])
    tf = rp.tfidf.embed(corpus.texts[:10]).toarray()
    assert np.array_equal(x, (tf @ rp.planes > 0).astype(np.float32))


def test_quick_reproduction_row_runs_on_the_wiki_leads():
    from zoo_binary_pv.reproduce import REPRODUCTION, K, rp_hash_row

    assert len(REPRODUCTION.seeds) >= 3 and REPRODUCTION.checks[0].baseline == "semantic_hashing"
    row = rp_hash_row(seed=0, quick=True)
    assert 0 <= row["chance"] < row[f"p_at_{K}"] <= 1 and 0.3 < row["bits_set"] < 0.7


@pytest.mark.slow
def test_quick_reproduction_runs():
    import dataclasses

    from zoo.claims import run_claim
    from zoo_binary_pv.reproduce import REPRODUCTION

    claim = dataclasses.replace(REPRODUCTION, rows=[r for r in REPRODUCTION.rows if "minilm" not in r.label])
    res = run_claim(claim, quick=True)
    assert res.rows["binary_pv"]["p_at_10"]["mean"] > res.rows["binary_pv"]["chance"]["mean"]
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
