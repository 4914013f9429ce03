"""mrbert plugin: the conformance kit, ModernBERT's attention pattern and RoPE, the MRL loss, the hub name map."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import zoo
from zoo.testing import check_plugin
from zoo_mrbert.encoder import Attention, ModernBertEncoder, apply_rope, attention_mask, rope_angles
from zoo_mrbert.hub import config_from_hf, from_hf_names, from_official, to_hf_names
from zoo_mrbert.model import CPU, PAPER, SPECIALS, mrbert, training_pairs, wsd
from zoo_mrbert.mrl import infonce, mrl_infonce

TINY = {"dim": 16, "layers": 3, "heads": 2, "intermediate": 24, "local_window": 4, "max_len": 16, "nesting": [2, 4, 8, 16]}


def test_conformance(hub):
    check_plugin("mrbert", overrides={"mrbert": {**TINY, "vocab": ["king", "queen", "cat", "dog"]}})


def test_presets_and_overrides():
    m = mrbert()
    assert m.nesting == tuple(CPU["nesting"]) == (8, 16, 32, 64) and m.arch["layers"] == 3
    with torch.device("meta"):  # the released shape, without spending seconds on initialising 110M weights
        p = mrbert(preset="paper", vocab_size=100)
    assert p.arch["dim"] == PAPER["dim"] == 768 and len(p.encoder.blocks) == 22 and p.nesting[-1] == 768
    assert [p.encoder.is_global(i) for i in range(6)] == [True, False, False, True, False, False]
    assert p.encoder.blocks[1].attn.window == 128 and p.encoder.blocks[0].attn.window is None
    assert isinstance(p.encoder.blocks[0].attn_norm, torch.nn.Identity)  # the embeddings are normalised already
    assert all(not n.endswith("bias") for n, _ in p.named_parameters())  # ModernBERT: no bias terms anywhere
    with pytest.raises(ValueError, match="preset"):
        mrbert(preset="huge")
    with pytest.raises(ValueError, match="nesting"):
        mrbert(dim=16, nesting=[4, 32])


# ---------------------------------------------------------------- ModernBERT's attention pattern and RoPE

def test_local_attention_masks_exactly_the_window():
    keep = torch.tensor([[True] * 7 + [False]])
    m = attention_mask(keep, 4)[0, 0]
    i, j = np.indices((8, 8))
    expected = ((np.abs(i - j) <= 2) & (j < 7)) | (i == j)
    assert torch.equal(m, torch.as_tensor(expected))
    assert torch.equal(attention_mask(keep, None)[0, 0], torch.as_tensor((j < 7) | (i == j)))
    # and the layer obeys it: changing token j moves output i only when |i - j| <= 2
    torch.manual_seed(0)
    att = Attention(8, 2, theta=10_000.0, window=4).eval()
    x = torch.randn(1, 9, 8)
    ones = torch.ones(1, 9, dtype=torch.bool)
    y = att(x, ones)
    for jj in (0, 4, 8):
        x2 = x.clone()
        x2[0, jj] += 1.0
        moved = (att(x2, ones) - y).abs().amax(-1)[0] > 1e-6
        assert moved.tolist() == [abs(ii - jj) <= 2 for ii in range(9)]
    glob = Attention(8, 2, theta=10_000.0, window=None).eval()
    x2 = x.clone()
    x2[0, 0] += 1.0
    assert ((glob(x2, ones) - glob(x, ones)).abs().amax(-1) > 1e-6).all()  # a global layer: every output moves


def test_rope_scores_depend_on_relative_position_only():
    torch.manual_seed(0)
    q, k = torch.randn(10, 16), torch.randn(10, 16)
    pos = torch.arange(10)

    def scores(shift):
        cos, sin = rope_angles(pos + shift, 16, 10_000.0)
        return apply_rope(q, cos, sin) @ apply_rope(k, cos, sin).T

    base = scores(0)
    assert torch.allclose(scores(5), base, atol=1e-4) and torch.allclose(scores(1000), base, atol=1e-3)
    assert not torch.allclose(base, q @ k.T, atol=1e-2)  # the rotation does act (positions matter)
    cos, sin = rope_angles(pos.flip(0), 16, 10_000.0)
    assert not torch.allclose(apply_rope(q, cos, sin) @ apply_rope(k, cos, sin).T, base, atol=1e-2)  # order does
    # so a whole encoder is unchanged when every position is shifted
    enc = ModernBertEncoder(30, dim=16, layers=3, heads=2, intermediate=24, local_window=4).eval()
    ids = torch.randint(5, 30, (2, 9))
    out = enc(ids)
    assert torch.allclose(enc(ids, positions=torch.arange(9) + 37), out, atol=1e-4)


# ---------------------------------------------------------------- the MRL loss and nested embeddings

def test_mrl_loss_is_the_sum_of_the_per_size_losses():
    torch.manual_seed(0)
    q, d = torch.randn(6, 16), torch.randn(6, 16)
    total, parts = mrl_infonce(q, d, (2, 4, 16), temperature=0.1)
    by_hand = {m: F.cross_entropy(F.normalize(q[:, :m], dim=1) @ F.normalize(d[:, :m], dim=1).T / 0.1,
                                  torch.arange(6)) for m in (2, 4, 16)}
    assert all(torch.allclose(parts[m], by_hand[m]) for m in by_hand)
    assert torch.allclose(total, sum(by_hand.values()))
    plain, only = mrl_infonce(q, d, (16,), temperature=0.1)
    assert list(only) == [16] and torch.allclose(plain, infonce(q, d, 0.1)) and not torch.allclose(plain, total)
    weighted, _ = mrl_infonce(q, d, (2, 4, 16), temperature=0.1, weights=(2.0, 0.0, 1.0))
    assert torch.allclose(weighted, 2 * by_hand[2] + by_hand[16])


def test_model_loss_uses_its_nesting():
    torch.manual_seed(0)
    q, d = torch.randn(4, 16), torch.randn(4, 16)
    assert list(mrbert(**TINY).loss(q, d)[1]) == [2, 4, 8, 16]
    assert list(mrbert(**{**TINY, "nesting": [16]}).loss(q, d)[1]) == [16]


def test_prefix_embeddings_are_nested():
    model = zoo.create("mrbert", **{**TINY, "vocab": ["a", "b", "c"]})
    texts = ["a b", "c a b c", "zzz"]
    full = model.embed(texts)
    assert full.shape == (3, 16)
    for m in (2, 4, 8):
        assert torch.equal(model.embed(texts, dim=m), full[:, :m])
    assert torch.equal(model(texts), full)
    with pytest.raises(ValueError, match="truncate"):
        model.embed(texts, dim=17)


# ---------------------------------------------------------------- training: MRL prefixes vs plain truncation

def _pairs(n=48, words=120, seed=0):
    # planted retrieval: each passage is 10 random words, its query 3 of them
    rng = np.random.default_rng(seed)
    vocab = ["q" + chr(97 + i // 26) + chr(97 + i % 26) for i in range(words)]  # letters only: one token each
    docs = [rng.choice(words, 10, replace=False) for _ in range(n)]
    return [(" ".join(vocab[i] for i in d[:3]), " ".join(vocab[i] for i in d)) for d in docs]


def _recall_at(model, pairs, m):
    q = model.embed([a for a, _ in pairs], dim=m).numpy()
    d = model.embed([b for _, b in pairs], dim=m).numpy()
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return float(((q @ d.T).argmax(1) == np.arange(len(pairs))).mean())


def test_mrl_prefixes_retrieve_where_plain_truncation_fails():
    pairs = _pairs()
    args = {**TINY, "min_count": 1, "batch_size": 48, "lr": 3e-3, "steps": 60}
    mrl, plain = mrbert(**args), mrbert(**{**args, "nesting": [16]})
    fig = mrl.fit(pairs=pairs, seed=0)
    plain.fit(pairs=pairs, seed=0)
    assert fig["vocabulary"] == 120 and "final_loss_dim2" in fig
    assert _recall_at(mrl, pairs, 16) > 0.9 and _recall_at(plain, pairs, 16) > 0.9  # both learn the task
    # truncated to 2 or 4 of 16 dimensions the Matryoshka prefix still retrieves (0.75-1.0 over seeds 0, 1);
    # the plain embedding's prefix does not (0.1-0.4)
    assert _recall_at(mrl, pairs, 2) - _recall_at(plain, pairs, 2) > 0.3
    assert _recall_at(mrl, pairs, 4) - _recall_at(plain, pairs, 4) > 0.3


def test_fit_is_seeded_and_saves_its_vocabulary(tmp_path):
    pairs = _pairs(16)
    a = zoo.create("mrbert", **{**TINY, "min_count": 1, "batch_size": 8, "steps": 3})
    b = zoo.create("mrbert", **{**TINY, "min_count": 1, "batch_size": 8, "steps": 3})
    a.fit(pairs=pairs, seed=3)
    b.fit(pairs=pairs, seed=3)
    assert torch.equal(a.embed(["qaa qab"]), b.embed(["qaa qab"])) and 60 < len(a.vocab) <= 120
    zoo.save_pretrained(a, tmp_path / "m")
    again = zoo.create(f"local-dir:{tmp_path / 'm'}", pretrained=True)
    assert again.vocab == a.vocab and torch.equal(again.embed(["qaa qab qcd"]), a.embed(["qaa qab qcd"]))


def test_training_pairs_of_the_wiki_train_split_leave_the_test_leads_out():
    from zoo_task_embedding_quality.data import load_wiki_articles, wiki_split

    class Corpus:
        name = "wiki-train"

    pairs = training_pairs(Corpus())
    arts = load_wiki_articles()
    test_leads = {arts[i]["extract"] for i in wiki_split()[1]}
    assert len(pairs) == 8878 and not test_leads & {b for _, b in pairs}
    assert wsd(0, 100) == 0.1 and wsd(50, 100) == 1.0 and wsd(99, 100) == pytest.approx(0.05)


# ---------------------------------------------------------------- the hub loader (offline)

def _hf_config(model, **extra):
    a = model.arch
    return {"architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert", "hidden_size": a["dim"],
            "num_hidden_layers": a["layers"], "num_attention_heads": a["heads"], "intermediate_size": a["intermediate"],
            "local_attention": a["local_window"], "global_attn_every_n_layers": a["global_every"],
            "global_rope_theta": a["global_theta"], "local_rope_theta": a["local_theta"], "norm_eps": 1e-5,
            "norm_bias": False, "attention_bias": False, "mlp_bias": False, "hidden_activation": "gelu",
            "vocab_size": model.encoder.tok_emb.num_embeddings, "pad_token_id": 0, "max_position_embeddings": 16,
            **extra}


def test_hub_checkpoint_with_modernbert_names_loads_to_equal_outputs(tmp_path):
    from safetensors.torch import save_file

    torch.manual_seed(0)
    src = mrbert(**{**TINY, "vocab": [f"w{i}" for i in range(20)]}).eval()
    state = to_hf_names(src.state_dict())
    assert "model.layers.0.attn.Wqkv.weight" in state and "model.layers.0.attn_norm.weight" not in state
    assert "model.layers.1.attn_norm.weight" in state and "model.final_norm.weight" in state
    d = src.arch["dim"]
    state.update({"head.dense.weight": torch.randn(d, d), "head.norm.weight": torch.ones(d),
                  "decoder.weight": state["model.embeddings.tok_embeddings.weight"].clone(),
                  "decoder.bias": torch.zeros(25)})  # the masked-LM head, dropped by the loader
    save_file({k: v.contiguous() for k, v in state.items()}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(_hf_config(src)))
    model = from_official(tmp_path / "model.safetensors")
    assert model.zoo.model_args["vocab_size"] == 25 and model.encoder.blocks[1].attn.window == 4
    ids = torch.tensor([[2, 7, 9, 11, 3, 0, 0], [2, 5, 6, 8, 13, 21, 3]])
    assert torch.allclose(model(ids), src(ids), atol=1e-6)
    assert torch.allclose(model.encode(ids, ids != 0), src.encode(ids, ids != 0), atol=1e-6)
    with pytest.raises(KeyError, match="not ModernBERT"):
        from_hf_names({"model.layers.0.attn.q_proj.weight": torch.zeros(1)})
    with pytest.raises(ValueError, match="bias"):
        config_from_hf({**_hf_config(src), "norm_bias": True})


def test_config_reads_new_transformers_rope_spelling():
    cfg = {"hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 48,
           "vocab_size": 50, "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
           "rope_parameters": {"full_attention": {"rope_theta": 160000.0}, "sliding_attention": {"rope_theta": 10000.0}}}
    args = config_from_hf(cfg)
    assert (args["global_theta"], args["local_theta"], args["global_every"]) == (160000.0, 10000.0, 3)
    with pytest.raises(ValueError, match="layer_types"):
        config_from_hf({**cfg, "layer_types": ["full_attention"] * 4})


@pytest.mark.slow
def test_matches_transformers_modernbert():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.ModernBertConfig(vocab_size=40, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                                        num_attention_heads=2, local_attention=4, pad_token_id=0, bos_token_id=2,
                                        eos_token_id=3, cls_token_id=2, sep_token_id=3, max_position_embeddings=64)
    torch.manual_seed(0)
    ref = transformers.ModernBertModel(cfg).eval()
    model = mrbert(**config_from_hf(cfg.to_dict())).eval()
    model.load_state_dict(from_hf_names(ref.state_dict()), strict=True)
    ids = torch.randint(5, 40, (2, 12))
    ids[0, 9:] = 0
    keep = ids != 0
    with torch.no_grad():
        want = ref(input_ids=ids, attention_mask=keep.long()).last_hidden_state
    got = model(ids)
    assert torch.allclose(got[keep], want[keep], atol=1e-4), (got[keep] - want[keep]).abs().max()


def test_quick_reproduction_rows_are_wired():
    from zoo_mrbert.reproduce import DIMS, REPRODUCTION, SMALL, truncated_scores

    assert len(REPRODUCTION.seeds) >= 3 and REPRODUCTION.task_options == {"corpus": "wiki"}
    labels = [r.label for r in REPRODUCTION.rows]
    assert labels[:2] == ["mrbert_mrl", "mrbert_plain"] and REPRODUCTION.rows[1].args["nesting"] == (DIMS[-1],)
    assert {c.metric for c in REPRODUCTION.checks} == {*(f"recall@1_dim{m}" for m in SMALL), f"recall@1_dim{DIMS[-1]}"}
    # the scorer truncates before ranking: a perfect 2-d prefix scores 1 at m=2 whatever the other coordinates hold
    rng = np.random.default_rng(0)
    base = np.c_[np.cos(np.arange(5)), np.sin(np.arange(5))]
    q, d = np.c_[base, rng.normal(size=(5, 6))], np.c_[base, rng.normal(size=(5, 6)) * 10]
    s = truncated_scores(q, d, list(range(5)), (2, 8))
    assert s["recall@1_dim2"] == 1.0 and s["recall@1_dim8"] < 1.0
    assert len(SPECIALS) == 5
