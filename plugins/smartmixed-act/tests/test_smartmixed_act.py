"""Conformance kit plus tests of SmartMixed's two phases: Gumbel selection, freezing, grouping, training."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_smartmixed_act.model import CLIP, POOL, SmartMixedActivation, choice_counts, freeze, smartmixed_layers, smartmixed_mlp
from zoo_smartmixed_act.training import freeze_after
from zoo_task_digits import task


def test_conformance(hub):
    check_plugin("smartmixed-act", overrides={"smartmixed_mlp": {"hidden": 12}})


def test_initial_logits_follow_the_authors_code():
    torch.manual_seed(0)
    layer = SmartMixedActivation(50)
    assert layer.logits.shape == (50, len(POOL)) and not layer.frozen
    assert torch.equal((layer.logits == 0.001).sum(-1), torch.ones(50, dtype=torch.long))
    assert torch.equal((layer.logits == 0).sum(-1), torch.full((50,), len(POOL) - 1))


def test_selection_is_hard_forward_soft_backward():
    torch.manual_seed(1)
    layer = SmartMixedActivation(6).train()
    w = layer.mixture_weights()
    assert torch.equal(w.detach().sum(-1), torch.ones(6)) and set(w.detach().unique().tolist()) <= {0.0, 1.0}
    x = torch.randn(4, 6)
    layer(x).sum().backward()
    assert layer.logits.grad is not None and layer.logits.grad.abs().sum() > 0
    # each neuron's output is one of the six candidates applied to its input
    torch.manual_seed(2)
    y = layer(x)
    torch.manual_seed(2)
    chosen = layer.mixture_weights().argmax(-1)
    ref = torch.stack([list(POOL.values())[int(k)](x[:, i]) for i, k in enumerate(chosen)], dim=-1)
    torch.testing.assert_close(y, ref)


def test_eval_before_freezing_uses_the_argmax_and_equals_the_frozen_layer():
    torch.manual_seed(3)
    layer = SmartMixedActivation(40)
    with torch.no_grad():
        layer.logits.normal_()
    x = torch.randn(7, 40)
    y_eval = layer.eval()(x)
    assert torch.equal(y_eval, layer(x))  # deterministic
    counts = layer.freeze()
    assert layer.frozen and sum(counts.values()) == 40 and not layer.logits.requires_grad
    torch.testing.assert_close(layer(x), y_eval)
    for i in range(40):
        fn = list(POOL.values())[int(layer.choice[i])]
        torch.testing.assert_close(layer(x)[:, i], fn(x[:, i]))


def test_freezing_keeps_the_clip_of_the_selection_phase():
    # issue 14: the selection phase clips to [-10, 10], the frozen path did not, so freezing changed the function
    torch.manual_seed(4)
    layer = SmartMixedActivation(60)
    x = 40 * torch.randn(9, 60)
    y_eval = layer.eval()(x)
    assert y_eval.abs().max() <= CLIP and (x.abs() > CLIP).any()
    layer.freeze()
    torch.testing.assert_close(layer(x), y_eval)


def test_frozen_choices_survive_save_and_load(tmp_path):
    torch.manual_seed(4)
    model = zoo.create("smartmixed_mlp", hidden=16)
    for layer in smartmixed_layers(model):
        with torch.no_grad():
            layer.logits.normal_()
    counts = freeze(model)
    x = task.example_input(5)
    out = model.eval()(x)
    folder = zoo.save_pretrained(model, tmp_path / "frozen")
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True).eval()
    assert all(layer.frozen for layer in smartmixed_layers(loaded)) and choice_counts(loaded) == counts
    assert torch.equal(loaded(x), out)


def test_same_linear_weights_as_the_relu_mlp():
    base = task.build_baseline("mlp-ln-relu", seed=7).state_dict()
    torch.manual_seed(7)
    ours = zoo.create("smartmixed_mlp").state_dict()
    assert all(torch.equal(v, ours[k]) for k, v in base.items())
    assert sum(k.endswith("logits") for k in ours) == 2


def _logits(model):
    return [layer.logits.detach().clone() for layer in smartmixed_layers(model)]


def test_freeze_after_n_training_steps():
    """Selection runs for exactly n steps of the task's loop, then the choices and logits stay fixed."""
    def run(steps: int, freeze_at: int):
        torch.manual_seed(0)
        model = smartmixed_mlp(hidden=16)
        start = _logits(model)
        with freeze_after(model, freeze_at) as counts:
            zoo.evaluate(model, task="digits_classify", steps=steps, seed=0, baselines=[])
        return model, start, counts

    long, start, counts = run(steps=6, freeze_at=3)
    short, _, _ = run(steps=3, freeze_at=3)  # the same first 3 steps (constant lr below 20 steps), frozen at the end
    assert all(layer.frozen for layer in smartmixed_layers(long)) and [sum(c.values()) for c in counts] == [16, 16]
    assert any(not torch.equal(a, b) for a, b in zip(start, _logits(long), strict=True))  # phase 1 learned
    assert all(torch.equal(a, b) for a, b in zip(_logits(short), _logits(long), strict=True))  # phase 2 did not
    assert choice_counts(long) == counts
    assert not any(h for h in long._forward_pre_hooks.values())  # the hook is removed


def test_freeze_before_the_first_step_keeps_the_initial_logits():
    torch.manual_seed(0)
    model = smartmixed_mlp(hidden=16, depth=3)
    start = _logits(model)
    with freeze_after(model, 0) as counts:
        task.train(model, steps=3, seed=0)
    assert len(counts) == 3 and all(torch.equal(a, b) for a, b in zip(start, _logits(model), strict=True))


def test_quick_reproduction_measures_choices_and_inference_cost():
    import math

    from zoo.claims import run_claim
    from zoo_smartmixed_act.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table) == [f"{kind} d={d}" for d in (2, 3, 4) for kind in ("SmartMixed", "ReLU-only")]
    assert [c["check"] for c in r.checks] == ["SmartMixed d=2 chi2_p <= 0.01", "SmartMixed d=3 chi2_p <= 0.01",
                                              "SmartMixed d=4 chi2_p <= 0.01", "SmartMixed d=4 frozen_over_single <= 1.5"]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    sm = r.table["SmartMixed d=3"]
    # every hidden neuron chose exactly one function per layer: 128 per layer
    assert [sum(sm[f"layer{i}:{f}"] for f in POOL) for i in (1, 2, 3)] == [128.0] * 3 and "layer4:elu" not in sm
    # SmartMixed is not the ReLU-only MLP: other losses, and the selection logits only while training
    assert r.per_seed["SmartMixed d=2"]["final_train_loss"] != r.per_seed["ReLU-only d=2"]["final_train_loss"]
    assert sm["params"] > sm["params_at_inference"] == r.table["ReLU-only d=3"]["params"]
    d4 = r.table["SmartMixed d=4"]
    assert {"infer_ms_frozen", "infer_ms_selection", "infer_ms_single", "infer_ms_relu"} <= set(d4)
    # (b) compares the frozen network with the single-activation network of its most chosen function
    per_seed = r.per_seed["SmartMixed d=4"]
    assert per_seed["frozen_over_single"] == pytest.approx(
        [f / s for f, s in zip(per_seed["infer_ms_frozen"], per_seed["infer_ms_single"], strict=True)])
    assert 0 <= d4["single_function"] < len(POOL)
    assert "infer_ms_frozen" not in r.table["SmartMixed d=2"]
