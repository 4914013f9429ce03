"""embedllm: the conformance kit, routing = argmax of predicted correctness, the paper's two-class loss, the
training-only noise, and a quick reproduction: routing past the best single model, and the planted coding trait in
the learned predictions (the probe on random embeddings is tested with the task)."""
from __future__ import annotations

import torch

from zoo.testing import check_plugin
from zoo_embedllm.model import EmbedLLM, embedllm
from zoo_task_tabular_ctr import data, task
from zoo_task_tabular_ctr.baselines import BestSingle


def test_conformance(hub):
    check_plugin("embedllm")


def test_route_is_argmax_of_predicted_correctness_over_models():
    torch.manual_seed(0)
    m = embedllm(n_models=7, n_features=5).eval()
    x = torch.randn(11, 5)
    pairs = torch.stack([m(torch.full((11,), j), x) for j in range(7)], dim=1)  # (Q, M) through forward
    assert torch.allclose(m.scores(x), pairs, atol=1e-5)
    assert torch.equal(m.route(x), pairs.argmax(1))
    # the two-class cross-entropy of the paper equals binary cross-entropy on the returned logit
    ids, y = torch.randint(0, 7, (11,)), torch.randint(0, 2, (11,))
    ce = torch.nn.functional.cross_entropy(m.two_class_logits(ids, x), y)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(m(ids, x), y.float())
    assert torch.allclose(ce, bce, atol=1e-6)


def test_question_noise_only_while_training():
    m = EmbedLLM(n_models=3, n_features=4, dim=8, alpha=0.5)
    ids, x = torch.tensor([0, 1, 2]), torch.randn(3, 4)
    m.eval()
    assert torch.equal(m(ids, x), m(ids, x))
    m.train()
    assert not torch.equal(m(ids, x), m(ids, x))


def test_quick_reproduction_routes_past_the_best_model_and_learns_who_codes():
    torch.manual_seed(0)
    model = embedllm()
    m = data.correctness_matrix(0)
    task.train_matrix(model, m, seed=0, steps=600)
    y = m.y[:, m.test]
    with torch.no_grad():
        logits = model.scores(m.x[m.test]).T  # (M, Q_test)
    routed = y[model.route(m.x[m.test]), torch.arange(y.shape[1])].mean()
    best = BestSingle(30, 24)
    best.fit(m.y[:, m.train], m.x[m.train])
    assert float(routed) > float(y[best.route(m.x[m.test])[0]].mean()) + 0.02
    assert float(((logits > 0).float() == y).float().mean()) > float(((best.scores(m.x[m.test]).T > 0).float() == y)
                                                                    .float().mean()) + 0.05
    # the planted trait in the learned model: on held-out coding-heavy questions the specialists are predicted right
    # far more often than the others; a best-single-model predictor cannot tell them apart question by question
    coding_q = m.test[m.requirements[m.test, 0] > 0.5]
    with torch.no_grad():
        p = torch.sigmoid(model.scores(m.x[coding_q]))  # (Q, M)
    assert float(p[:, m.coding].mean() - p[:, ~m.coding].mean()) > 0.15
