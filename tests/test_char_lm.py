import hashlib
import math

import pytest
import torch

import zoo
from zoo_nn.gpt import GPT, capture_hidden, hidden_hooks
from zoo_task_char_lm import task as char_lm

TINY = dict(dim=32, depth=2, heads=2, block_size=32, mlp_ratio=4.0)


@pytest.fixture(scope="module")
def small():
    return char_lm.load_corpus(max_chars=40_000)


def test_corpus_is_fixed_identified_and_split():
    train, val, vocab = char_lm.load_corpus()
    assert len(vocab) == char_lm.VOCAB_SIZE == 97 and vocab[1] == "\n" and vocab[2] == " "
    assert len(train) + len(val) == len(char_lm.corpus_text())
    assert abs(len(val) / (len(train) + len(val)) - 0.1) < 0.01
    again = char_lm.load_corpus()
    assert torch.equal(again[0], train) and torch.equal(again[1], val)
    info = char_lm.corpus_info()
    assert info["corpus_sha256"] == hashlib.sha256(char_lm.corpus_text().encode()).hexdigest()
    if info["python"] in char_lm.EXPECTED_SHA256:
        assert info["corpus_sha256"] == char_lm.EXPECTED_SHA256[info["python"]]
    assert "def " in char_lm.decode(val[:5000])
    assert float((train == 0).float().mean()) < 1e-3  # almost everything is in the vocabulary


def test_encode_decode_round_trip_and_unknown_chars():
    ids = char_lm.encode("def f(x):\n\treturn 'é'")
    assert ids.dtype == torch.long and int(ids.max()) < 97
    assert char_lm.decode(ids) == "def f(x):\n\ufffdreturn '\ufffd'"


def test_gated_mlp_matches_parameters_and_norms_swap():
    counts = {act: sum(p.numel() for p in GPT(act=act).parameters()) for act in ("relu", "gelu", "swiglu", "reglu")}
    assert counts["relu"] == counts["gelu"]
    assert abs(counts["swiglu"] - counts["gelu"]) / counts["gelu"] < 0.001
    m = GPT(**TINY, norm_layer=torch.nn.RMSNorm, qk_norm=True)
    assert not any(isinstance(x, torch.nn.LayerNorm) for x in m.modules())
    assert sum(isinstance(x, torch.nn.RMSNorm) for x in m.modules()) == 2 * 4 + 1
    assert m(torch.zeros(3, 32, dtype=torch.long)).shape == (3, 32, 97)
    with pytest.raises(ValueError, match="block_size"):
        m(torch.zeros(1, 33, dtype=torch.long))
    with pytest.raises(ValueError, match="unknown activation"):
        GPT(act="relu3")


def test_hidden_hook_reads_and_replaces_activations():
    torch.manual_seed(0)
    m = GPT(**TINY, act="relu").eval()
    x = torch.randint(0, 97, (2, 32))
    with capture_hidden(m) as acts:
        y = m(x)
    assert sorted(acts) == [0, 1] and acts[0][0].shape == (2, 32, 128)
    assert float((acts[0][0] == 0).float().mean()) > 0.2  # ReLU zeros
    with hidden_hooks(m, lambda i, h: torch.zeros_like(h)):
        y0 = m(x)
    assert not torch.allclose(y, y0)
    assert torch.equal(m(x), y)  # hooks are gone


def test_training_learns_and_metrics(small):
    torch.manual_seed(0)
    m = char_lm.reference_gpt(**TINY, act="relu")
    before = char_lm.val_loss(m, small, max_windows=32)
    assert abs(before - math.log2(97)) < 0.3  # near uniform at init
    fig = char_lm.train(m, small, steps=60, batch_size=8, lr=1e-2)
    assert fig["steps"] == 60 and fig["seconds_per_step"] > 0
    after = char_lm.val_loss(m, small, max_windows=32)
    assert after < before - 1.0
    sp = char_lm.activation_sparsity(m, small, max_windows=8)
    assert set(sp) == {0, 1} and all(0.05 < v < 1.0 for v in sp.values())
    looser = char_lm.activation_sparsity(m, small, threshold=0.05, max_windows=8)
    assert all(looser[i] > sp[i] for i in sp)
    gelu = char_lm.reference_gpt(**TINY, act="gelu")
    assert max(char_lm.activation_sparsity(gelu, small, max_windows=4).values()) < 0.01


def test_evaluate_reports_baselines_and_corpus(small):
    torch.manual_seed(0)
    m = char_lm.reference_gpt(**TINY, act="swiglu")
    r = zoo.evaluate(m, task="char_lm", steps=3, baselines=["gpt-rms-relu"], data=small, batch_size=4)
    assert r.task == "char_lm" and set(r.baselines) == {"gpt-rms-relu"}
    base = r.baselines["gpt-rms-relu"]
    assert base["steps"] == 3 and abs(base["params"] - r.metrics["params"]) / r.metrics["params"] < 0.01
    assert {"val_bpc", "act_sparsity", "act_sparsity_l0", "seconds_per_step"} <= set(r.metrics)
    assert len(r.config["corpus_sha256"]) == 64 and r.config["dim"] == 32 and r.config["val_chars"] == len(small[1])


def test_contract_helpers():
    x = char_lm.example_input()
    assert x.shape == (2, 16) and x.dtype == torch.long
    m = char_lm.reference_gpt(**TINY)
    char_lm.check_output(m, m(x))
    with pytest.raises(AssertionError, match="expected logits"):
        char_lm.check_output(m, torch.zeros(2, 16, 10))
    from zoo import registry

    spec = registry.task("char_lm")
    assert spec.evaluate == "zoo_task_char_lm.task:evaluate" and "gpt-rms-swiglu" in spec.baselines
    with pytest.raises(ValueError, match="gpt-ln-gelu"):
        char_lm.build_baseline("gpt-ln-gelux")


def test_describe_is_what_evaluate_and_train_use(small, monkeypatch):
    seen, batches = {}, []

    class SpyAdamW(torch.optim.AdamW):
        def __init__(self, params, **kw):
            seen.update(kw)
            super().__init__(params, **kw)

    monkeypatch.setattr(torch.optim, "AdamW", SpyAdamW)
    torch.manual_seed(0)
    m = char_lm.reference_gpt(**TINY)
    m.register_forward_pre_hook(lambda mod, args: batches.append(tuple(args[0].shape)))
    r = zoo.evaluate(m, task="char_lm", steps=2, baselines=[], data=small)
    d = char_lm.describe(steps=2)
    assert seen == {"lr": d["lr"], "betas": tuple(d["betas"]), "weight_decay": d["weight_decay"]}
    assert batches[0] == (d["batch_size"], TINY["block_size"]) and r.metrics["steps"] == d["steps"] == 2
    assert {k: r.config[k] for k in ("steps", "batch_size", "lr", "weight_decay", "warmup")} == \
        {k: d[k] for k in ("steps", "batch_size", "lr", "weight_decay", "warmup")}
    assert r.config["corpus_sha256"] == d["corpus_sha256"] and d["baselines"] == list(char_lm.BASELINES)
    assert {"val_bpc", "act_sparsity", "seconds_per_step"} == set(d["metrics"]) and set(d["metrics"]) <= set(r.metrics)
    default = char_lm.describe()
    assert default["steps"] == char_lm.DEFAULT_STEPS and default["reference_gpt"] == char_lm.GPT_DEFAULTS
    other = char_lm.describe(budget_s=5.0, batch_size=4, lr=1e-2)
    assert (other["steps"], other["budget_s"], other["batch_size"], other["lr"]) == (None, 5.0, 4, 1e-2)
    with pytest.raises(ValueError, match="batch_size"):
        char_lm.describe(batchsize=4)


def test_val_bpc_is_scored_on_the_whole_validation_split():
    # issue 14: val_bpc read the first 256 windows only (a fifth of the split at block 64, and easier text than the rest)
    data = char_lm.load_corpus(max_chars=400_000)
    torch.manual_seed(0)
    m = char_lm.reference_gpt(**TINY)
    r = zoo.evaluate(m, task="char_lm", steps=1, baselines=[], data=data, batch_size=2)
    whole = char_lm.val_loss(m, data, max_windows=None)
    assert len(data[1]) // TINY["block_size"] > 256
    assert r.metrics["val_bpc"] == pytest.approx(whole) and char_lm.val_loss(m, data) == pytest.approx(whole)
    assert abs(whole - char_lm.val_loss(m, data, max_windows=256)) > 1e-4
    assert "whole validation split" in char_lm.describe()["metrics"]["val_bpc"]


def test_claim_budget_is_recorded_with_its_measured_seed_spread(small):
    # issue 14: the claims' 300-step budget left seeds of one configuration 0.42 bits/char apart
    budget = char_lm.describe()["claim_budget"]
    assert budget == {"size": char_lm.CLAIM_SIZE, "steps": char_lm.CLAIM_STEPS, **char_lm.CLAIM_TRAIN,
                      "seed_spread_bpc": char_lm.CLAIM_SEED_SPREAD_BPC}
    assert char_lm.CLAIM_STEPS >= 1000 and 0 < char_lm.CLAIM_SEED_SPREAD_BPC < 0.42 / 4
    assert set(char_lm.CLAIM_TRAIN) <= set(char_lm.TRAIN_OPTIONS) and char_lm.CLAIM_SIZE["block_size"] <= 128
    got = char_lm.seed_spread("gpt-rms-relu", seeds=(0, 1), steps=2, size=TINY, data=small, batch_size=2)
    assert len(got["val_bpc"]) == 2 and got["spread"] == max(got["val_bpc"]) - min(got["val_bpc"]) > 0
    assert got["lr"] == char_lm.CLAIM_TRAIN["lr"] and got["steps"] == 2
