import pytest
import torch

import zoo
from zoo_nn.backbones import DigitsCNN, DigitsMLP, TinyViT
from zoo_task_digits import task as digits


def test_split_is_fixed_and_stratified():
    xtr, ytr, xte, yte = digits.load_split()
    assert xtr.shape == (1347, 1, 8, 8) and xte.shape == (450, 1, 8, 8)
    assert 0.0 <= float(xtr.min()) and float(xtr.max()) <= 1.0
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


def test_training_learns_and_budget_stops():
    torch.manual_seed(0)
    m = DigitsMLP()
    fig = digits.train(m, steps=200)
    assert fig["steps"] == 200
    assert digits.accuracy(m)["accuracy"] > 0.9
    fig = digits.train(DigitsMLP(), steps=None, budget_s=0.5)
    assert 0 < fig["steps"] and fig["train_seconds"] < 2.0


def test_evaluate_reports_baselines_next_to_model():
    r = zoo.evaluate("fixture_mlp", steps=40, baselines=["mlp-ln-relu"])
    assert r.task == "digits_classify" and r.n == 450
    assert set(r.baselines) == {"mlp-ln-relu"}
    assert 0.0 <= r.metrics["accuracy"] <= 1.0 and r.metrics["steps"] == 40
    assert r.baselines["mlp-ln-relu"]["steps"] == 40
    assert "mlp-ln-relu" in r.table("fixture_mlp")


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
