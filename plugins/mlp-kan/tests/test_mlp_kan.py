import argparse
import math
import pickle

import pytest
import torch
from torch.nn import functional as F

import zoo
from zoo.testing import check_plugin
from zoo_mlp_kan.convert import from_official
from zoo_mlp_kan.model import (
    FasterKAN,
    MLPExpert,
    MLPKANMoE,
    load_balancing_loss,
    mlp_kan_formula,
    mlp_kan_vit,
    mlp_slot_share,
)
from zoo_task_formula_regress.task import torch_threads

TINY_DEIT = {"num_classes": 5, "img_size": 32, "patch_size": 16, "dim": 24, "depth": 1, "heads": 3, "ffn_dim": 8}
SMALL = {"mlp_kan_vit": {"dim": 16, "depth": 1, "heads": 2, "ffn_dim": 8}, "mlp_kan_deit": TINY_DEIT}


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def test_conformance(hub):
    check_plugin("mlp-kan", overrides=SMALL)


def test_router_takes_top2_and_renormalises():
    torch.manual_seed(0)
    moe = MLPKANMoE(dim=6, ffn_dim=4, num_experts=8, top_k=2)
    x = torch.randn(10, 6)
    probs = torch.softmax(x @ moe.gate.weight.T, -1)
    w, idx = probs.topk(2, -1)
    w = w / w.sum(-1, keepdim=True)
    dense = torch.stack([e(x) for e in moe.experts], 1)  # (N, E, D)
    want = (w.unsqueeze(-1) * dense[torch.arange(10).unsqueeze(1), idx]).sum(1)
    assert torch.allclose(moe(x), want, atol=1e-6)
    assert torch.allclose(moe.last_router_probs, probs)
    assert moe(x.reshape(2, 5, 6)).shape == (2, 5, 6)


def test_load_balancing_loss_is_switch_eq_4():
    """E * sum_e f_e P_e: f_e from the first choices (no gradient), P_e the mean router probability."""
    torch.manual_seed(0)
    logits = torch.randn(50, 4, requires_grad=True)
    probs = torch.softmax(logits, -1)
    first = probs.argmax(-1)
    f = torch.bincount(first, minlength=4).float() / 50
    loss = load_balancing_loss(probs, first)
    assert float(loss.detach()) == pytest.approx(4 * float((f * probs.detach().mean(0)).sum()), rel=1e-6)
    (grad,) = torch.autograd.grad(loss, logits)
    busiest = int(f.argmax())
    assert float(grad[:, busiest].mean()) > 0  # descending it lowers the logits of the overloaded expert
    assert float(load_balancing_loss(torch.full((6, 3), 1 / 3), torch.tensor([0, 1, 2, 0, 1, 2]))) == pytest.approx(1.0)


def test_models_add_the_balancing_loss_to_the_task_loss():
    torch.manual_seed(0)
    x, y = torch.rand(4, 1, 8, 8), torch.tensor([0, 1, 2, 3])
    vit = mlp_kan_vit(dim=16, depth=2, heads=2, ffn_dim=8)
    out = vit(x)
    aux = [m.aux_loss for m in vit.modules() if isinstance(m, MLPKANMoE)]
    assert len(aux) == 2 and all(float(a.detach()) >= 1 - 1e-6 for a in aux)  # >= 1, equality when balanced
    assert torch.allclose(vit.loss(out, y), F.cross_entropy(out, y) + 1e-2 * (aux[0] + aux[1]))
    assert torch.equal(mlp_kan_vit(dim=16, depth=1, heads=2, ffn_dim=8, aux_loss_coef=0.0).loss(out, y),
                       F.cross_entropy(out, y))
    reg = mlp_kan_formula(in_features=3)
    pred, target = reg(torch.rand(5, 3)), torch.rand(5, 1)
    moe = reg.blocks[0].ffn
    assert torch.allclose(reg.loss(pred, target), F.mse_loss(pred, target) + 1e-2 * moe.aux_loss)
    assert 0 <= mlp_slot_share(reg) <= 1 and moe.last_choice.shape == (5 * 4, 2)


def test_balancing_loss_spreads_the_routing_on_formula_regress():
    """Issue 14: trained by the task loss alone the routers favour one kind of expert; the balancing loss (which
    formula_regress's trainer now takes from model.loss) keeps the slots near an even split."""
    from zoo_task_formula_regress import task as formula

    data = formula.make_data("exp_sin_sq")
    share = {}
    for coef in (0.0, 1e-2):
        torch.manual_seed(0)
        model = mlp_kan_formula(in_features=2, aux_loss_coef=coef)
        formula.train(model, data, steps=150, lr=1e-2)
        formula.relative_rmse(model, data)  # routes the test points
        share[coef] = mlp_slot_share(model)
    assert abs(share[1e-2] - 0.5) < 0.1 and abs(share[0.0] - 0.5) > abs(share[1e-2] - 0.5) + 0.1, share


def test_experts_are_half_mlp_half_fasterkan():
    moe = MLPKANMoE(dim=8, ffn_dim=6, num_experts=8)
    kinds = [type(e).__name__ for e in moe.experts]
    assert kinds == ["MLPExpert"] * 4 + ["FasterKAN"] * 4
    kan = moe.experts[4]
    assert [(layer.in_features, layer.out_features) for layer in kan.layers] == [(8, 3), (3, 8)]
    assert moe.gate.bias is None and isinstance(moe.experts[0], MLPExpert)


def test_fasterkan_layer_is_rswaf_on_normalised_input():
    torch.manual_seed(0)
    kan = FasterKAN([3, 2])
    layer = kan.layers[0]
    assert torch.allclose(layer.grid, torch.linspace(-1.2, 0.2, 8)) and float(layer.inv_denominator) == 0.5
    x = torch.randn(5, 3)
    z = F.layer_norm(x, (3,), layer.norm.weight, layer.norm.bias)
    basis = 1 - torch.tanh((z.unsqueeze(-1) - layer.grid) * 0.5) ** 2
    assert torch.allclose(kan(x), basis.flatten(1) @ layer.spline_linear.weight.T, atol=1e-6)


def test_pure_variants_and_contracts():
    for kind in ("moe", "mlp", "kan"):
        assert mlp_kan_vit(ffn=kind, depth=1)(torch.rand(2, 1, 8, 8)).shape == (2, 10)
        assert mlp_kan_formula(in_features=3, ffn=kind)(torch.rand(4, 3)).shape == (4, 1)
    with pytest.raises(ValueError):
        mlp_kan_vit(ffn="conv")


# ---------------------------------------------------------------- the official checkpoint format


def official_state_dict(seed: int = 0) -> dict[str, torch.Tensor]:
    """Keys and shapes of the authors' VisionKAN (timm VisionTransformer + kanBlock + MoE_KAN_MLP + FasterKAN)
    for TINY_DEIT, written out by hand (not derived from the plugin's modules)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g) * 0.2  # noqa: E731
    d, ffn, e, grids = 24, 8, 8, 8
    sd = {"cls_token": r(1, 1, d), "pos_embed": r(1, 5, d), "patch_embed.proj.weight": r(d, 3, 16, 16),
          "patch_embed.proj.bias": r(d), "norm.weight": 1 + r(d), "norm.bias": r(d), "head.weight": r(5, d),
          "head.bias": r(5)}
    b = "blocks.0."
    sd.update({b + "norm1.weight": 1 + r(d), b + "norm1.bias": r(d), b + "norm2.weight": 1 + r(d),
               b + "norm2.bias": r(d), b + "attn.qkv.weight": r(3 * d, d), b + "attn.proj.weight": r(d, d),
               b + "attn.proj.bias": r(d),
               # timm Block.mlp: built by kanBlock's super().__init__, never used in its forward
               b + "mlp.fc1.weight": r(4 * d, d), b + "mlp.fc1.bias": r(4 * d), b + "mlp.fc2.weight": r(d, 4 * d),
               b + "mlp.fc2.bias": r(d), b + "kan.gate.weight": r(e, d)})
    for j in range(e // 2):
        p = f"{b}kan.experts.{j}."
        sd.update({p + "fc1.weight": r(ffn, d), p + "fc1.bias": r(ffn), p + "fc2.weight": r(d, ffn), p + "fc2.bias": r(d)})
    for j in range(e // 2, e):
        for layer, (n_in, n_out) in enumerate(((d, ffn // 2), (ffn // 2, d))):
            p = f"{b}kan.experts.{j}.layers.{layer}."
            sd.update({p + "layernorm.weight": 1 + r(n_in), p + "layernorm.bias": r(n_in),
                       p + "rbf.grid": torch.linspace(-1.2, 0.2, grids), p + "rbf.inv_denominator": torch.tensor(0.5),
                       p + "spline_linear.weight": r(n_out, n_in * grids)})
    return sd


def official_forward(sd: dict[str, torch.Tensor], x: torch.Tensor, heads: int = 3) -> torch.Tensor:
    """The authors' forward pass, written functionally from their code's semantics."""
    d = sd["cls_token"].shape[-1]
    t = F.conv2d(x, sd["patch_embed.proj.weight"], sd["patch_embed.proj.bias"], stride=16).flatten(2).transpose(1, 2)
    t = torch.cat([sd["cls_token"].expand(len(x), -1, -1), t], 1) + sd["pos_embed"]
    b = "blocks.0."
    h = F.layer_norm(t, (d,), sd[b + "norm1.weight"], sd[b + "norm1.bias"], eps=1e-5)
    q, k, v = (h @ sd[b + "attn.qkv.weight"].T).reshape(len(x), -1, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
    a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // heads), -1) @ v
    t = t + a.transpose(1, 2).reshape(len(x), -1, d) @ sd[b + "attn.proj.weight"].T + sd[b + "attn.proj.bias"]
    tok = F.layer_norm(t, (d,), sd[b + "norm2.weight"], sd[b + "norm2.bias"], eps=1e-5).reshape(-1, d)
    w, idx = torch.softmax(tok @ sd[b + "kan.gate.weight"].T, -1).topk(2, -1)
    w = w / w.sum(-1, keepdim=True)
    outs = []
    for j in range(8):
        p = f"{b}kan.experts.{j}."
        if j < 4:
            y = F.gelu(tok @ sd[p + "fc1.weight"].T + sd[p + "fc1.bias"]) @ sd[p + "fc2.weight"].T + sd[p + "fc2.bias"]
        else:
            y = tok
            for layer in range(2):
                q_ = f"{p}layers.{layer}."
                z = F.layer_norm(y, y.shape[-1:], sd[q_ + "layernorm.weight"], sd[q_ + "layernorm.bias"], eps=1e-5)
                basis = 1 - torch.tanh((z.unsqueeze(-1) - sd[q_ + "rbf.grid"]) * sd[q_ + "rbf.inv_denominator"]) ** 2
                y = basis.flatten(1) @ sd[q_ + "spline_linear.weight"].T
        outs.append(y)
    dense = torch.stack(outs, 1)
    moe = (w.unsqueeze(-1) * dense[torch.arange(len(tok)).unsqueeze(1), idx]).sum(1)
    t = t + moe.reshape(t.shape)
    t = F.layer_norm(t, (d,), sd["norm.weight"], sd["norm.bias"], eps=1e-6)
    return t[:, 0] @ sd["head.weight"].T + sd["head.bias"]


def write_official_checkpoint(path, sd):
    args = argparse.Namespace(model="deit_tiny_patch16_224_KAN", hdim_kan=8, input_size=32, batch_size=144,
                              lr=5e-4, data_set="CIFAR", output_dir="./moe10-results")
    torch.save({"model": sd, "optimizer": {"state": {}, "param_groups": [{"lr": 5e-4, "params": [0, 1]}]},
                "lr_scheduler": {"last_epoch": 3}, "epoch": 3, "model_ema": {k: v.clone() for k, v in sd.items()},
                "scaler": {"scale": 65536.0, "growth_factor": 2.0}, "args": args}, path)


def test_converter_reproduces_the_official_forward(tmp_path):
    sd = official_state_dict()
    path = tmp_path / "checkpoint.pth"
    write_official_checkpoint(path, sd)
    model = from_official(path)
    assert model.zoo.name == "mlp_kan_deit" and dict(model.zoo.model_args)["heads"] == 3
    assert {k: v for k, v in model.zoo.model_args.items() if k in TINY_DEIT} == TINY_DEIT
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(model(x), official_forward(sd, x), atol=1e-5)


def test_zoo_convert_writes_safetensors_that_load_strictly(tmp_path, hub):
    from zoo.cli import main

    sd = official_state_dict(1)
    write_official_checkpoint(tmp_path / "best_checkpoint.pth", sd)
    out = tmp_path / "converted"
    assert main(["convert", "mlp_kan_deit.official", str(tmp_path / "best_checkpoint.pth"), "--to", str(out)]) == 0
    assert (out / "model.safetensors").exists() and (out / "config.json").exists()
    model = zoo.create(f"local-dir:{out}", pretrained=True).eval()
    x = torch.rand(1, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(model(x), official_forward(sd, x), atol=1e-5)


class NotAllowed:
    """An arbitrary class: torch.load(weights_only=True) must refuse to build it."""


def test_converter_refuses_arbitrary_pickles_and_wrong_keys(tmp_path):
    sd = official_state_dict()
    bad = tmp_path / "bad.pth"
    torch.save({"model": sd, "hook": NotAllowed()}, bad)
    with pytest.raises(pickle.UnpicklingError):
        from_official(bad)
    sd["blocks.0.kan.gate.extra"] = torch.zeros(1)
    odd = tmp_path / "odd.pth"
    torch.save({"model": sd}, odd)
    with pytest.raises(KeyError, match="unexpected"):
        from_official(odd, heads=3)


def test_quick_reproduction_runs_both_tasks_at_equal_size():
    from zoo.claims import run_claim
    from zoo_mlp_kan.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table) == ["MLP-KAN", "MLP", "KAN"] and r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == ["accuracy: MLP-KAN - MLP >= -0.02", "accuracy: MLP-KAN - KAN >= -0.02",
                                              "log_rel_rmse_gmean: MLP - MLP-KAN >= -0.405465",
                                              "log_rel_rmse_gmean: KAN - MLP-KAN >= -0.405465"]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    for key in ("digits_params", "formula_params"):  # the pure rows are sized to MLP-KAN on both tasks
        p = r.table["MLP-KAN"][key]
        assert all(abs(r.table[b][key] - p) / p < 0.1 for b in ("MLP", "KAN")), key
    # the mixture is neither pure model: same seeds and batches, different results on both tasks
    for b in ("MLP", "KAN"):
        assert r.per_seed["MLP-KAN"]["final_train_loss"] != r.per_seed[b]["final_train_loss"]
        assert r.per_seed["MLP-KAN"]["rel_rmse:xy"] != r.per_seed[b]["rel_rmse:xy"]
