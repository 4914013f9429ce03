import inspect
import types

import pytest
import torch

import zoo
from zoo_nn.backbones import DigitsCNN, DigitsMLP, TinyViT
from zoo_task_digits import task as digits


def test_split_is_fixed_and_stratified():
    xtr, ytr, xte, yte = digits.load_split()
    assert xtr.shape == (1347, 1, 8, 8) and xte.shape == (450, 1, 8, 8)
    assert float(xtr.min()) == 0.0 and float(xtr.max()) == 1.0  # pixel values 0..16, divided by 16
    counts = torch.bincount(yte, minlength=10)
    assert int(counts.min()) >= 43 and int(counts.max()) <= 46
    again = digits.load_split()
    assert torch.equal(again[3], yte)


@pytest.mark.parametrize("cls", [DigitsMLP, DigitsCNN, TinyViT])
def test_backbones_take_layers(cls):
    m = cls(norm_layer=torch.nn.RMSNorm, act_layer=torch.nn.SiLU)
    assert any(isinstance(x, torch.nn.RMSNorm) for x in m.modules())
    assert not any(isinstance(x, torch.nn.LayerNorm) for x in m.modules())
    assert m(torch.rand(3, 1, 8, 8)).shape == (3, 10)


def test_training_learns():
    torch.manual_seed(0)
    m = DigitsMLP()
    fig = digits.train(m, steps=200)
    assert fig["steps"] == 200
    assert digits.accuracy(m)["accuracy"] > 0.9


def test_budget_stops_training_before_the_steps(monkeypatch):
    """A fake clock (one second per reading) instead of wall time: the outcome cannot depend on machine load."""
    import zoo.task

    ticks = iter(range(10_000))
    monkeypatch.setattr(zoo.task, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    fig = digits.train(DigitsMLP(hidden=8, depth=1), steps=1000, budget_s=4.5)
    assert 1 <= fig["steps"] <= 4  # the budget, not the 1000 steps, ended the run
    fig = digits.train(DigitsMLP(hidden=8, depth=1), steps=3, budget_s=1e9)
    assert fig["steps"] == 3  # and the steps end it when they come first


def test_evaluate_reports_baselines_next_to_model():
    model = zoo.create("fixture_mlp")
    r = zoo.evaluate(model, steps=40, baselines=["mlp-ln-relu"])
    assert r.task == "digits_classify" and r.n == 450
    assert set(r.baselines) == {"mlp-ln-relu"}
    # the model was trained in place (above chance, 0.1), and its reported accuracy is that model's on the test split
    assert r.metrics["accuracy"] == digits.accuracy(model)["accuracy"] > 0.2 and r.metrics["steps"] == 40
    # the baseline row is the task's baseline trained by the same protocol (same seed, same batches)
    base = digits.build_baseline("mlp-ln-relu", seed=0)
    torch.manual_seed(0)
    digits.train(base, steps=40, seed=0)
    assert r.baselines["mlp-ln-relu"]["accuracy"] == digits.accuracy(base)["accuracy"]
    assert r.baselines["mlp-ln-relu"]["params"] == zoo.task.count_params(base) == 26634
    assert "mlp-ln-relu" in r.table("fixture_mlp")


def test_describe_is_what_evaluate_runs(monkeypatch):
    """describe() reports the settings train() really uses: optimiser, lr, weight decay, batch size, steps."""
    used = {}

    class AdamW(torch.optim.AdamW):
        def __init__(self, params, lr, weight_decay):
            used.update(optimizer="AdamW", lr=lr, weight_decay=weight_decay)
            super().__init__(params, lr=lr, weight_decay=weight_decay)

    monkeypatch.setattr(torch.optim, "AdamW", AdamW)
    model = zoo.create("fixture_mlp")

    def batch(module, args):
        if module.training:
            used.setdefault("batch_size", len(args[0]))

    model.register_forward_pre_hook(batch)
    r = zoo.evaluate(model, steps=3, baselines=[])
    d = digits.describe(steps=3)
    assert {k: d[k] for k in used} == used and d["steps"] == r.metrics["steps"] == 3
    assert {k: r.config[k] for k in d} == d and r.config["seed"] == 0
    assert (d["n_train"], d["n_test"]) == (len(digits.load_split()[1]), r.n)
    defaults = {k: p.default for k, p in inspect.signature(digits.train).parameters.items()}
    assert digits.describe()["steps"] == defaults["steps"] == digits.DEFAULT_STEPS
    assert all(digits.describe()[k] == defaults[k] for k in ("batch_size", "lr", "weight_decay"))
    assert zoo.evaluate(zoo.create("fixture_mlp"), steps=3, baselines=[], lr=1e-3).config["lr"] == 1e-3
    assert zoo.registry.task("digits_classify").describe == "zoo_task_digits.task:describe"


def test_unknown_baseline_lists_the_valid_ones():
    with pytest.raises(ValueError, match="mlp-ln-relu"):
        digits.build_baseline("resnet")


def test_dict_heads_are_all_scored():
    class Heads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.f = torch.nn.Linear(64, 10)

        def forward(self, x):
            z = self.f(x.flatten(1))
            return {"logits": {2: z * 0, 4: z}}

    acc = digits.accuracy(Heads())
    assert set(acc) == {"accuracy@2", "accuracy@4", "accuracy"} and acc["accuracy"] == acc["accuracy@4"]
    with pytest.raises(AssertionError, match="expected"):
        digits.check_output(None, {"logits": torch.zeros(2, 3)})


def test_unknown_task_suggests():
    with pytest.raises(zoo.TaskNotFound, match="digits_classify"):
        zoo.evaluate(zoo.create("fixture_mlp"), task="digit_classify")
