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
    # the baseline row is the task's baseline at the model's parameter count, trained by the same protocol (same
    # seed, same batches)
    n = zoo.task.count_params(model)
    base = digits.build_baseline("mlp-ln-relu", params=n, seed=0)
    torch.manual_seed(0)
    digits.train(base, steps=40, seed=0)
    assert r.baselines["mlp-ln-relu"]["accuracy"] == digits.accuracy(base)["accuracy"]
    assert (n, r.baselines["mlp-ln-relu"]["params"]) == (1210, zoo.task.count_params(base)) == (1210, 1219)  # hidden 13
    assert "mlp-ln-relu" in r.table("fixture_mlp") and "model's count_params" in r.config["baseline_size"]
    # baseline_params=None keeps the backbone's default size (the old behaviour, for callers that want it)
    fixed = zoo.evaluate(zoo.create("fixture_mlp"), steps=2, baselines=["mlp-ln-relu"], baseline_params=None)
    assert fixed.baselines["mlp-ln-relu"]["params"] == 26634 and "default sizes" in fixed.config["baseline_size"]


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


class _ZeroGradParams(torch.nn.Module):
    """A DigitsMLP plus parameters of every shape whose gradient is exactly zero: AdamW moves them by decay alone."""

    def __init__(self):
        super().__init__()
        self.body = DigitsMLP(hidden=8, depth=1)
        self.gain = torch.nn.Parameter(torch.ones(8))  # a norm gain / bias
        self.alpha = torch.nn.Parameter(torch.ones(1))  # a scalar (Derf's alpha and shift)
        self.affine = torch.nn.Parameter(torch.ones(1, 8, 1, 1))  # EvoNorm's per-channel v1, gamma, beta
        self.matrix = torch.nn.Parameter(torch.ones(8, 8))  # a weight matrix: decayed

    def forward(self, x):
        unused = sum(p.sum() for p in (self.gain, self.alpha, self.affine, self.matrix))
        return self.body(x) + 0.0 * unused


def test_weight_decay_spares_vectors_and_scalars():
    """issue 14: train() decayed every parameter, so norm gains, biases and Derf's alpha shrank towards 0."""
    torch.manual_seed(0)
    net = _ZeroGradParams()
    digits.train(net, steps=30)
    assert net.gain.grad is not None and float(net.gain.grad.abs().max()) == 0.0  # zero gradient, not no gradient
    assert float(net.matrix.detach().max()) < 1.0  # decay still applies to matrices (0.05 at lr <= 2e-3 for 30 steps)
    for p in (net.gain, net.alpha, net.affine):
        assert torch.equal(p, torch.ones_like(p))
    assert [digits.decays(p) for p in (net.body.head.weight, net.body.head.bias, net.affine)] == [True, False, False]
    assert "none on biases" in digits.describe()["weight_decay_on"]


@pytest.mark.parametrize("name, target", [("mlp-ln-relu", 1210), ("cnn-ln-relu", 19_834), ("vit-ln-gelu", 203_000)])
def test_baselines_are_sized_to_a_parameter_count(name, target):
    """issue 14: baselines had fixed sizes (cnn-ln-relu 66k beside a 20k EvoNorm ResNet): now the closest width."""
    from zoo.task import count_params

    base = digits.build_baseline(name, params=target, seed=3)
    n = count_params(base)
    assert abs(n - target) <= 0.05 * target  # the width steps of these backbones allow 5% at these sizes
    for step in (-1, 1):  # and no neighbouring width is closer
        arg = digits.WIDTH_ARG[digits.BASELINES[name]]
        width = base.head.in_features
        if arg == "width":
            width //= 2  # the CNN's last stage has twice its base width
        unit = 4 if arg == "dim" else 1  # the ViT's width is a multiple of its 4 heads
        other = digits.build_baseline(name, **{arg: width + step * unit})
        assert abs(count_params(other) - target) >= abs(n - target)
    again = digits.build_baseline(name, params=target, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(base.state_dict().values(), again.state_dict().values(), strict=True))
    with pytest.raises(ValueError, match="pass one"):
        digits.build_baseline(name, params=target, **{digits.WIDTH_ARG[digits.BASELINES[name]]: 8})


def test_default_baseline_sizes_are_unchanged():
    from zoo.task import count_params

    assert [count_params(digits.build_baseline(n)) for n in digits.BASELINES] == [26634, 65834, 136138]


fashion = pytest.mark.skipif(not (digits.FASHION_MNIST_DIR / "t10k-labels-idx1-ubyte.gz").is_file(),
                             reason="Fashion-MNIST not installed: apt-get install -y dataset-fashion-mnist")


@fashion
def test_fashion_mnist_is_the_official_split_at_8x8():
    xtr, ytr, xte, yte = digits.load_split("fashion_mnist")
    assert xtr.shape == (60_000, 1, 8, 8) and xte.shape == (10_000, 1, 8, 8)
    assert 0.0 <= float(xte.min()) and float(xte.max()) <= 1.0 and float(xte.mean()) > 0.2  # 0..255 / 255, averaged
    assert torch.bincount(yte).tolist() == [1000] * 10 and torch.bincount(ytr).tolist() == [6000] * 10
    assert digits._split("fashion_mnist")[0] is digits._split("fashion_mnist")[0]  # parsed once
    d = digits.describe(dataset="fashion_mnist")
    assert (d["dataset"], d["n_train"], d["n_test"]) == ("fashion_mnist", 60_000, 10_000)


@fashion
def test_fashion_mnist_scores_every_test_image():
    class Constant(torch.nn.Module):  # always class 3: exactly 1000 of the 10,000 test images
        def forward(self, x):
            return torch.nn.functional.one_hot(torch.full((len(x),), 3), 10).float()

    assert digits.accuracy(Constant(), dataset="fashion_mnist") == {"accuracy": 0.1}
    yte = digits.load_split()[3]
    assert digits.accuracy(Constant()) == {"accuracy": float((yte == 3).sum()) / 450}  # the digits test split
    torch.manual_seed(0)
    model = zoo.create("fixture_mlp")
    r = zoo.evaluate(model, steps=30, baselines=[], dataset="fashion_mnist")
    assert r.n == 10_000 and r.config["dataset"] == "fashion_mnist" and r.metrics["accuracy"] > 0.2  # chance: 0.1


def test_missing_fashion_mnist_names_the_package(monkeypatch, tmp_path):
    monkeypatch.setattr(digits, "FASHION_MNIST_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="apt-get install -y dataset-fashion-mnist"):
        digits.load_split("fashion_mnist")
    with pytest.raises(ValueError, match="fashion_mnist"):
        digits.load_split("mnist")


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
