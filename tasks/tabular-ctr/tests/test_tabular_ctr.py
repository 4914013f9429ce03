"""tabular_ctr matrix mode: the seeded generative model, the metrics' exact cases, the probe, and the contract."""
from __future__ import annotations

import pytest
import torch

from zoo_task_tabular_ctr import data, task
from zoo_task_tabular_ctr.baselines import BestSingle, KNNRouter, MatrixFactorization, build_baseline


def test_matrix_is_seeded_and_follows_its_model():
    a, b = data.correctness_matrix(1), data.correctness_matrix(1)
    assert torch.equal(a.y, b.y) and torch.equal(a.x, b.x) and torch.equal(a.coding, b.coding)
    assert not torch.equal(a.y, data.correctness_matrix(2).y)
    assert int(a.coding.sum()) == 15 and len(set(a.train.tolist()) | set(a.test.tolist())) == 2000
    # the specialists are the planted ones: their coding skill is higher by about the boost
    gap = a.skills[a.coding, 0].mean() - a.skills[~a.coding, 0].mean()
    assert abs(float(gap) - data.SPECIALIST_BOOST) < 0.8
    # Bernoulli outcomes match their probabilities, and the features are a noisy linear image of the requirements
    assert abs(float(a.y.mean() - a.p.mean())) < 0.01
    z = torch.cat([a.requirements, a.difficulty[:, None], torch.ones(2000, 1)], 1)
    coef = torch.linalg.lstsq(z, a.x).solution
    r2 = 1 - (a.x - z @ coef).var() / a.x.var()
    assert 0.6 < float(r2) < 0.95  # signal variance about 1 against noise 0.25


def test_routing_metrics_exact_cases():
    r = task.evaluate(BestSingle(30, 24), seed=0, baselines=[]).metrics
    assert r["routing_accuracy"] == r["best_single_accuracy"] < r["oracle_accuracy"]
    m = data.correctness_matrix(0)

    class Oracle(BestSingle):  # knows the held-out answers: routes perfectly
        def scores(self, question_feats):
            assert torch.equal(question_feats, m.x[m.test])
            return 10 * (m.y[:, m.test].T - 0.5)

    o = task.evaluate(Oracle(30, 24), seed=0, baselines=[]).metrics
    assert o["routing_accuracy"] == o["oracle_accuracy"] and o["accuracy"] == 1.0 and o["auc"] == 1.0


def test_probe_reads_planted_trait_from_true_skills_not_from_noise():
    m = data.correctness_matrix(0)
    # the boost is 2 skill standard deviations: the best linear rule is right with probability Phi(1) = 0.84
    assert task.probe_accuracy(m.skills, m.coding) >= 0.75
    rand = [task.probe_accuracy(torch.randn(30, 16, generator=torch.Generator().manual_seed(s)), m.coding) for s in range(3)]
    assert sum(rand) / 3 <= 0.65


def test_baselines_fit_and_the_contract():
    m = data.correctness_matrix(0)
    knn = KNNRouter(30, 24, k=5)
    knn.fit(m.y[:, m.train], m.x[m.train])
    first = m.train[:3]  # a training question's nearest neighbour is itself
    acc = knn.neighbour_accuracy(m.x[first])
    assert acc.shape == (3, 30) and torch.all((acc * 5).round() == acc * 5)
    mf = MatrixFactorization(30, 24, rank=6)
    mf.fit(m.y[:, m.train], m.x[m.train])
    assert mf.model_embeddings().shape == (30, 6)
    with pytest.raises(ValueError, match="n_models=30"):
        task.evaluate(BestSingle(12, 24), baselines=[])
    with pytest.raises(ValueError, match="input_kind"):
        task.evaluate(BestSingle(30, 24), mode="ctr", dataset="synthetic", baselines=[])
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("xgboost")
    with pytest.raises(AssertionError, match="logits"):
        task.check_output(None, torch.zeros(3))
