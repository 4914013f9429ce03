"""concrete-sentence-space plugin: the conformance kit, the paper's construction in closed form, one space for two
structures, and what an additive composition cannot do."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_concrete_sentence_space.model import concrete_sentence_space
from zoo_task_embedding_quality.baselines import build_baseline

TINY = {"dim": 6}

# a toy corpus in the paper's spirit: two senses of "runs" (companies / races), a landmark verb for each
CORPUS = [s.split() for s in (
    ["boss runs firm", "boss runs shop", "boss manages firm", "boss manages shop",
     "athlete runs race", "athlete runs marathon", "athlete competes race", "athlete competes marathon",
     "boss sleeps", "athlete sleeps", "athlete runs", "athlete competes", "boss manages"] * 3)]


def _fitted(dim=None):
    model = concrete_sentence_space(dim=dim or 50)
    model.fit(CORPUS)
    return model


def test_conformance(hub):
    check_plugin("concrete-sentence-space", overrides={"concrete_sentence_space": TINY})


def test_presets_and_overrides():
    assert concrete_sentence_space().dim == 100 and concrete_sentence_space(preset="paper").dim == 2000
    assert concrete_sentence_space(preset="paper", dim=30).dim == 30
    with pytest.raises(ValueError, match="preset"):
        concrete_sentence_space(preset="huge")


def test_verb_and_sentence_are_the_papers_closed_form():
    model = _fitted()
    n = model.noun
    pairs = [(s, o) for s, v, *rest in CORPUS if v == "runs" and rest for o in rest]
    verb = sum(torch.outer(n(s), n(o)) for s, o in pairs)
    assert torch.allclose(model.transitive["runs"], verb)
    sent = model.sentence_vec("boss", "runs", "firm")
    assert sent.shape == (model.dim * model.dim,)
    assert torch.allclose(sent, (verb * torch.outer(n("boss"), n("firm"))).reshape(-1))
    # intransitive: the verb is the sum of its subjects, the sentence verb (.) subject, embedded as (.) (x) 1/sqrt(d)
    iv = sum(n(s) for s, v, *rest in CORPUS if v == "runs" and not rest)
    assert torch.allclose(model.intransitive["runs"], iv)
    flat = model.sentence_vec("athlete", "runs").reshape(model.dim, model.dim)
    assert torch.allclose(flat, torch.outer(iv * n("athlete"), torch.full((model.dim,), model.dim ** -0.5,
                                                                         dtype=torch.float64)))
    assert torch.equal(model.embed(["boss runs firm"])[0], sent.float())


def test_both_structures_live_in_one_space_and_compare_by_inner_product():
    model = _fitted()
    trans = [model.sentence_vec("boss", "runs", "firm"), model.sentence_vec("athlete", "runs", "race")]
    intr = [model.sentence_vec("boss", "manages"), model.sentence_vec("athlete", "competes")]
    assert {v.shape for v in trans + intr} == {(model.dim ** 2,)}
    sim = np.array([[model.similarity(t, i) for i in intr] for t in trans])
    # each transitive sentence is nearer the intransitive sentence of its own sense than of the other one
    assert sim[0, 0] > sim[0, 1] + 0.05 and sim[1, 1] > sim[1, 0] + 0.05
    e = model.embed(["boss runs firm", "boss manages"]).double()
    assert abs(float(e[0] @ e[1]) / float(e[0].norm() * e[1].norm()) - sim[0, 0]) < 1e-5


def test_roles_matter_where_an_additive_mean_cannot_see_them():
    # "boss runs firm" vs "firm runs boss": the additive baseline gives one vector; the tensor space two
    model = _fitted()
    x = model.embed(["boss runs firm", "firm runs boss"]).double()
    assert float(x[0] @ x[1]) / float(x[0].norm() * x[1].norm()) < 0.9
    from zoo_task_embedding_quality.data import TextCorpus

    corpus = TextCorpus("toy", CORPUS, list(range(len(CORPUS))), [" ".join(s) for s in CORPUS])
    add = build_baseline("ppmi_svd", data=corpus, dim=4, min_count=1).embed(["boss runs firm", "firm runs boss"])
    assert np.allclose(add[0], add[1])


def test_unseen_words_and_unknown_verbs_give_zero_vectors():
    model = _fitted()
    assert not model.sentence_vec("boss", "flies", "firm").any() and not model.sentence_vec("boss", "flies").any()
    assert not model.embed(["qqq zzz www"]).any() and model.similarity(torch.zeros(4), torch.ones(4)) == 0.0


def test_quick_reproduction_tensor_beats_additive_across_structures():
    from zoo_concrete_sentence_space.reproduce import ADDITIVE, CONCRETE, _build, cross_scores
    from zoo_concrete_sentence_space.structures import mixed_svo

    data = mixed_svo(seed=0)
    concrete = cross_scores(_build(CONCRETE, data.corpus, 0), data.items)
    additive = cross_scores(_build(ADDITIVE, data.corpus, 0), data.items)
    assert concrete["cross_spearman"] > 0.8 and concrete["cross_spearman"] > additive["cross_spearman"] + 0.3


@pytest.mark.slow
def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_concrete_sentence_space.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 5
    res = run_claim(REPRODUCTION, quick=True)
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert zoo.create("concrete_sentence_space").embedding_mode == "svo"
