"""icl_toy: known answers of the task generators, the exactness of the head/residual hooks, and the contract."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo.task import torch_threads
from zoo_nn.gpt import GPT
from zoo_task_icl_toy import data as D
from zoo_task_icl_toy import task as T
from zoo_task_icl_toy.gpt import (
    HookedGPT,
    RegressionGPT,
    add_to_residual,
    head_vectors,
    mean_head_outputs,
    patch_heads,
    record_heads,
    residual_states,
)
from zoo_task_icl_toy.interventions import MeanHeads, NoVector, RandomHeads

V = D.VOCAB


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):  # tiny models on a shared machine: one thread is the fast setting
        yield


def tiny_gpt(seed: int = 0) -> HookedGPT:
    torch.manual_seed(seed)
    return HookedGPT(vocab_size=V.size, dim=16, depth=3, heads=4, block_size=32).eval()


def test_word_tasks_are_bijections_and_calendar_tasks_are_modular_shifts():
    for name, (domain, table) in D.TOKEN_TASKS.items():
        assert sorted(table.tolist()) == list(range(len(V.domain(domain)))), name  # every task is a bijection
    assert len({tuple(D.TOKEN_TASKS[f"word_perm_{c}"][1]) for c in "abc"}) == 3  # three different permutations
    sat, sun, mon = V.day0 + 5, V.day0 + 6, V.day0 + 0  # weekdays counted from Monday = 0
    assert D.apply_task("weekday_plus1", sat) == sun and D.apply_task("weekday_plus2", sat) == mon
    dec, jan, feb = V.month0 + 11, V.month0 + 0, V.month0 + 1
    assert D.apply_task("month_plus1", dec) == jan and D.apply_task("month_plus2", dec) == feb
    assert D.apply_task("word_shift", V.word0 + 14) == V.word0 + 3  # (14 + 5) mod 16
    with pytest.raises(ValueError, match="domain"):
        D.apply_task("weekday_plus1", V.word0)
    with pytest.raises(ValueError, match="unknown task"):
        D.apply_task("weekday_minus1", V.day0)


def test_prompts_follow_the_task_and_corruption_only_shuffles_the_outputs():
    for t, name in enumerate(D.TASK_NAMES):
        ids, ans = D.token_prompts(t, 20, 5, rng=np.random.default_rng(t))
        bad, bad_ans = D.token_prompts(t, 20, 5, rng=np.random.default_rng(t), corrupt=True)
        assert ids.shape == (20, 18) and (ids[:, 0] == V.bos).all() and (ids[:, 2::3] == V.arrow).all()
        for row, a, brow, b in zip(ids, ans, bad, bad_ans, strict=True):
            xs, ys = row[1::3], row[3::3]
            assert [D.apply_task(name, x) for x in xs[:5]] == ys.tolist() and D.apply_task(name, xs[5]) == a
            assert (brow[1::3] == xs).all() and sorted(brow[3::3]) == sorted(ys) and b == a
    ids, tg = D.token_training_batch(64, 4, rng=np.random.default_rng(0))
    arrows = np.nonzero(ids == V.arrow)
    assert (tg[arrows] >= V.word0).all() and (tg != -100).sum() == 64 * 5  # every arrow predicts its output, only them


def test_regression_prompts_are_linear_and_corruption_keeps_the_ys():
    w = D.regression_weights()
    x, y = D.regression_prompts(w, 6, rng=np.random.default_rng(1))
    xb, yb = D.regression_prompts(w, 6, rng=np.random.default_rng(1), corrupt=True)
    assert x.shape == (4, 7, 6) and (x[:, :6, 5] == 0).all() and (x[:, 6, 4:] == [0, 1]).all()  # demos, then the query
    assert np.allclose(np.einsum("nkd,nd->nk", x[:, :6, :4], w), x[:, :6, 4], atol=1e-5)  # y_i = w . x_i
    assert np.allclose((x[:, -1, :4] * w).sum(1), y, atol=1e-5)
    assert np.allclose(xb[:, :, :4], x[:, :, :4]) and np.allclose(yb, y)
    assert np.allclose(np.sort(xb[:, :6, 4], 1), np.sort(x[:, :6, 4], 1)) and not np.allclose(xb[:, :6, 4], x[:, :6, 4])
    seq, ys = D.regression_training_batch(8, 20, rng=np.random.default_rng(0))
    assert seq.shape == (8, 21, 6) and ys.shape == (8,)


def test_hooked_gpt_is_the_reference_gpt_and_heads_sum_to_the_attention_output():
    gpt = tiny_gpt()
    ref = GPT(vocab_size=V.size, dim=16, depth=3, heads=4, block_size=32).eval()
    ref.load_state_dict({k: v for k, v in gpt.state_dict().items()})
    ids = torch.from_numpy(D.token_prompts(0, 3, 4, rng=np.random.default_rng(0))[0])
    assert torch.allclose(gpt(ids), ref(ids), atol=1e-6)  # the hook points change nothing
    got: dict[str, torch.Tensor] = {}
    blk = gpt.blocks[1]
    blk.attn.register_forward_hook(lambda _m, _i, out: got.setdefault("attn", out))
    with record_heads(gpt) as rec:
        gpt(ids)
    z = torch.stack(rec, 1)  # (B, depth, heads, hd) at the last position
    per_head = head_vectors(gpt, z)[:, 1]  # (B, heads, dim)
    assert torch.allclose(per_head.sum(1) + blk.attn.out.bias, got["attn"][:, -1], atol=1e-5)


def test_patching_and_adding_act_only_where_asked():
    gpt = tiny_gpt()
    ids = torch.from_numpy(D.token_prompts(2, 4, 3, rng=np.random.default_rng(0))[0])
    base = gpt(ids)
    with record_heads(gpt) as rec:
        gpt(ids)
    with patch_heads(gpt, {(1, 2): rec[1][:, 2]}):  # a head patched with its own output: nothing changes
        assert torch.allclose(gpt(ids), base, atol=1e-6)
    with patch_heads(gpt, {(1, 2): torch.zeros(4)}):
        out = gpt(ids)
    assert torch.allclose(out[:, :-1], base[:, :-1]) and not torch.allclose(out[:, -1], base[:, -1])
    v = torch.randn(16)
    with add_to_residual(gpt, {2: v}):
        out = gpt(ids)
        states = residual_states(gpt, ids)
    assert torch.allclose(out[:, :-1], base[:, :-1]) and not torch.allclose(out[:, -1], base[:, -1])
    assert torch.allclose(gpt.unembed(states[:, -1]), out[:, -1], atol=1e-5)  # the lens at the top is the output
    assert torch.allclose(states[:, 2] - residual_states(gpt, ids)[:, 2], v.expand(4, 16), atol=1e-5)
    with pytest.raises(ValueError, match="out of range"), add_to_residual(gpt, {7: v}):
        pass


def test_baseline_interventions_on_a_tiny_gpt():
    gpt = tiny_gpt()
    data = T.icl_data("token", n=6, shots=3)
    sizes = {"n_tasks": 8, "depth": 3, "dim": 16}
    none = NoVector(**sizes)
    assert torch.equal(none(gpt, data.zero.inputs, data.zero.task), gpt(data.zero.inputs))
    rnd, top = RandomHeads(**sizes, heads=4, k=3), MeanHeads(**sizes, heads=4, k=3)
    rnd.fit(gpt, data, seed=0)
    top.fit(gpt, data)
    assert int(rnd.chosen.sum()) == int(top.chosen.sum()) == 3 and rnd.layer == top.layer == 1
    clean = torch.stack([head_vectors(gpt, mean_head_outputs(gpt, data.clean.of_task(t).inputs)) for t in range(8)])
    want = (clean * top.chosen[None, :, :, None]).sum((1, 2))
    assert torch.allclose(top.vectors[:, 1], want, atol=1e-5) and top.vectors[:, [0, 2, 3]].abs().max() == 0
    with pytest.raises(ValueError, match="depth=3"):
        NoVector(n_tasks=8, depth=4, dim=16)(gpt, data.zero.inputs, data.zero.task)
    with pytest.raises(ValueError, match="n_tasks=8"):
        NoVector(n_tasks=4, depth=3, dim=16).fit(gpt, data)


def test_regression_gpt_and_data_shapes():
    torch.manual_seed(0)
    g = RegressionGPT(d=4, dim=16, depth=2, heads=2, block_size=21).eval()
    data = T.icl_data("regression", n=3)
    assert data.clean.inputs.shape == (12, 11, 6) and data.zero.inputs.shape == (12, 1, 6)
    assert torch.allclose(data.zero.inputs[:, 0], data.clean.inputs[:, -1])
    assert g(data.clean.inputs).shape == (12, 11, 1)
    with pytest.raises(ValueError, match="vectors"):
        g(torch.zeros(2, 3, 5))


def test_options_and_contract_errors():
    with pytest.raises(ValueError, match="unknown mode"):
        T.describe(mode="images")
    with pytest.raises(ValueError, match="unknown baseline"):
        T.build_baseline("fv")
    with pytest.raises(ValueError, match="shots"):
        T.icl_data("token", shots=9)
    with pytest.raises(ValueError, match="intervention"):
        T.evaluate(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="unknown baselines"):
        T.evaluate(NoVector(), baselines=["nope"])
    m = T.build_baseline("mean_heads")
    out = m(*T.example_input(m))
    T.check_output(m, out)
    with pytest.raises(AssertionError):
        T.check_output(m, out[:, :2])
    assert T.describe()["tasks"] == list(D.TASK_NAMES) and T.describe(mode="regression")["gpt"]["block_size"] == 21
