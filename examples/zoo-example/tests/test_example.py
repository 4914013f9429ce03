"""The example plugin's tests: the conformance kit, then what makes the method this method.

Run from the plugin's folder with the kit's pytest plugin installed (``pip install 'zoo-core[test]'``)::

    pytest

The kit switches on by itself in a folder whose pyproject.toml declares ``zoo`` entry points: a local
hub in a temporary folder, Hub settings pointed at it, and a guard that fails any connection off loopback.
"""
from __future__ import annotations

import doctest
import math
import os

import torch

import zoo
from zoo.claims import run_claim
from zoo.task import count_params
from zoo_example import model as model_module


def test_conformance(check_plugin):
    # builds the model, JSON arguments, seeded determinism, save/reload and push/pull through the local hub
    # (bit for bit), a torch-free plugin.py, the task's forward contract
    check_plugin("example")


def test_the_kit_points_the_hub_at_a_local_server(hub):
    assert os.environ["HF_ENDPOINT"] == hub.url and hub.url.startswith("http://127.0.0.1:")


def test_registered_under_its_task_with_its_claim():
    spec = zoo.registry.catalog().models["example_mlp"][0]
    assert spec.task == "digits_classify" and spec.weights["digits"].recipe == "zoo_example.train:digits"
    assert zoo.registry.claim("example").reproduce == "zoo_example.reproduce:REPRODUCTION"


def test_he_initialisation():
    torch.manual_seed(0)
    model = zoo.create("example_mlp", hidden=4096)
    w = model.hidden.weight
    # He et al. 2015: N(0, 2 / fan_in); PyTorch's default (std 1/sqrt(3 fan_in) = 0.072 here) would fail
    assert abs(w.std().item() - math.sqrt(2 / 64)) < 0.02 * math.sqrt(2 / 64)
    assert abs(w.mean().item()) < 1e-3
    assert not model.hidden.bias.any() and not model.head.weight.any() and not model.head.bias.any()


def test_untrained_model_predicts_uniformly():
    # the zero output layer makes every logit 0 and the initial cross-entropy log(10), whatever the input
    # (the baseline's is about 2.3 too, but not to float32 precision)
    x, y = torch.rand(16, 1, 8, 8), torch.arange(16) % 10
    logits = zoo.create("example_mlp")(x)
    assert not logits.any()
    assert abs(torch.nn.functional.cross_entropy(logits, y).item() - math.log(10)) < 1e-6


def test_recipe_builds_through_zoo_create(monkeypatch):
    from zoo_example import train

    monkeypatch.setattr(train, "STEPS", 5)  # the recipe's code path in a fraction of a second
    model, metrics = train.digits(seed=0)
    assert model.zoo.name == "example_mlp" and model.zoo.task == "digits_classify"  # what `zoo train` needs
    assert metrics["steps"] == 5 and 0.0 <= metrics["accuracy"] <= 1.0


def test_claim_compares_at_matched_parameters():
    from zoo_example.reproduce import BASELINE, matched_hidden
    from zoo_task_digits import task

    ours, theirs = count_params(zoo.create("example_mlp", hidden=matched_hidden())), count_params(task.build_baseline(BASELINE))
    assert abs(ours - theirs) <= 0.01 * theirs


def test_quick_reproduction():
    from zoo_example.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True)  # 2 seeds x 20 steps: a smoke run, its verdict means nothing
    assert list(r.table) == ["example_mlp", "mlp-ln-relu"] and r.seeds == [0, 1] and r.quick
    assert [c["check"] for c in r.checks] == ["accuracy: example_mlp - mlp-ln-relu >= -0.01"]
    # different models on the same batches: the rows must differ
    assert r.per_seed["example_mlp"]["final_train_loss"] != r.per_seed["mlp-ln-relu"]["final_train_loss"]
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive")


def test_docstring_examples():
    result = doctest.testmod(model_module)
    assert result.failed == 0 and result.attempted >= 4
