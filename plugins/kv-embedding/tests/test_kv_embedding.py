"""kv-embedding plugin: the conformance kit, and what tells KV re-routing from plain pooling of the same frozen LM."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_kv_embedding.model import CPU, EOS, kv_embedding, kv_embedding_lm
from zoo_kv_embedding.twonn import select_layers, two_nn
from zoo_task_embedding_quality.data import TextCorpus

TINY = {"vocab_size": 40, "dim": 16, "depth": 3, "heads": 2, "block_size": 16}
WORDS = "the cat sat on a mat dog ran in park big red house small car".split()


def test_conformance(hub):
    check_plugin("kv-embedding", overrides={"kv_embedding": TINY, "kv_embedding_lm": TINY})


def _corpus(n=200):
    # three fixed sentences, in turn: a model that learns anything predicts them far better than uniform
    sents = [TEXTS[k % 3].split() for k in range(n)]
    return TextCorpus("toy", sents, [k // 3 for k in range(n)], [" ".join(s) for s in sents])


def _pair(**kw):
    torch.manual_seed(0)
    kv = kv_embedding(vocab=["<pad>", "<unk>", "<eos>", *WORDS], **{**TINY, **kw})
    plain = kv_embedding_lm(vocab=kv.vocab, **TINY)
    plain.lm.load_state_dict(kv.lm.state_dict())
    return kv.eval(), plain.eval()


TEXTS = ["the cat sat on a mat", "a dog ran", "big red house in the park", "small car"]


def test_presets_and_overrides():
    assert kv_embedding().reroute and not kv_embedding_lm().reroute and kv_embedding().pooling == CPU["pooling"]
    assert kv_embedding(preset="paper").pooling == "hybrid" and kv_embedding(dim=32, heads=2).dim == 32
    with pytest.raises(ValueError, match="preset"):
        kv_embedding(preset="huge")
    with pytest.raises(ValueError, match="layers"):
        kv_embedding(layers=[7])


def test_plain_path_is_the_frozen_gpt():
    # without re-routing the encoder is exactly zoo_nn's GPT: its head on our final states gives the GPT's logits
    kv, _ = _pair()
    ids = torch.tensor([kv.ids(TEXTS[0])])
    states = kv.hidden_states(ids, torch.tensor([ids.shape[1]]), reroute=False)
    assert len(states) == kv.depth + 1
    torch.testing.assert_close(kv.lm.head(states[-1]), kv.lm(ids), atol=1e-5, rtol=1e-5)


def test_without_the_prefix_it_is_mean_pooling():
    kv, plain = _pair(layers=[1, 2])
    mean = plain.embed(TEXTS)
    assert not torch.allclose(kv.embed(TEXTS), mean, atol=1e-4)  # the prefix changes the embedding
    torch.testing.assert_close(kv.pooled(TEXTS, layers=[])["mean"], mean)  # no re-routed layer: mean pooling
    torch.testing.assert_close(kv.pooled(TEXTS, bias=float("-inf"))["mean"], mean, atol=1e-6, rtol=1e-5)  # prefix off
    torch.testing.assert_close(kv.pooled(TEXTS, reroute=False)["last"], plain.pooled(TEXTS)["last"])


def test_the_prefix_lets_the_first_token_see_the_last():
    # causal attention: the first token's state cannot depend on later words; with the last token's KV as a
    # prefix it does (and the re-routed layers are the only place where it can)
    kv, _ = _pair(layers=[1])
    a, b = kv.ids("the cat sat on a mat"), kv.ids("the cat sat on a dog")
    ids = torch.tensor([a, b])
    lengths = torch.tensor([len(a), len(b)])
    plain = kv.hidden_states(ids, lengths, reroute=False)[-1]
    routed = kv.hidden_states(ids, lengths, reroute=True)[-1]
    torch.testing.assert_close(plain[0, 0], plain[1, 0])
    assert (routed[0, 0] - routed[1, 0]).abs().max() > 1e-3
    # before the first re-routed block nothing differs: block 0 is plain causal attention
    first = kv.hidden_states(ids, lengths, reroute=True)[1]
    torch.testing.assert_close(first[0, :5], first[1, :5])


def test_padding_is_invisible():
    kv, _ = _pair(layers=[1, 2], pooling="hybrid")
    alone = torch.cat([kv.embed([t]) for t in TEXTS])
    torch.testing.assert_close(kv.embed(TEXTS), alone, atol=1e-5, rtol=1e-5)
    assert kv.ids("zebra cat")[0] == kv.index["<unk>"] and kv.ids("")[-1] == EOS


def test_two_nn_on_known_dimensions():
    rng = np.random.default_rng(0)
    for d in (2, 5):
        flat = rng.standard_normal((1500, d)) @ rng.standard_normal((d, 40))  # d-dim subspace of 40-d
        assert abs(two_nn(flat) - d) < 0.15 * d + 0.2
    t = rng.uniform(0, 4 * np.pi, 1500)  # a curve (1-d) wound in 3-d, then randomly rotated into 10-d
    curve = np.stack([np.cos(t), np.sin(t), 0.3 * t], 1) @ np.linalg.qr(rng.standard_normal((10, 3)))[0].T
    assert abs(two_nn(curve) - 1) < 0.2
    assert select_layers([9.0, 3.0, 8.0, 2.0], 1, range(1, 4)) == [3]
    assert select_layers([9.0, 3.0, 8.0, 2.0], 2, range(1, 4)) == [2, 3]


def test_fit_trains_freezes_and_picks_layers_by_twonn(tmp_path):
    model = zoo.create("kv_embedding", **{**TINY, "depth": 4}, steps=40, batch_size=8, lr=1e-2, id_samples=60)
    untrained = model.lm.tok.weight.clone()
    fig = model.fit(_corpus(), seed=0)
    assert not torch.equal(untrained, model.lm.tok.weight) and not any(p.requires_grad for p in model.lm.parameters())
    assert fig["lm_final_loss"] < 0.5 * np.log(TINY["vocab_size"])  # far below the untrained (uniform) loss
    ids = model.layer_ids
    assert len(ids) == 4 and model.layers == select_layers(ids, 2, range(1, 4))
    assert model.zoo.model_args["layers"] == model.layers and model.zoo.model_args["vocab"] == model.vocab
    zoo.save_pretrained(model, tmp_path / "kv")
    again = zoo.create(f"local-dir:{tmp_path / 'kv'}", pretrained=True)
    assert again.layers == model.layers and torch.equal(again.embed(TEXTS), model.embed(TEXTS))
    other = zoo.create("kv_embedding", **{**TINY, "depth": 4}, steps=40, batch_size=8, lr=1e-2, id_samples=60)
    other.fit(_corpus(), seed=1)
    assert not torch.equal(other.lm.tok.weight, model.lm.tok.weight)  # the seed is the LM's seed


def test_hf_loader_on_a_tiny_random_llama(tmp_path):
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from zoo_kv_embedding import hf

    vocab = ["<pad>", "<unk>", "<eos>", *WORDS]
    tk = tokenizers.Tokenizer(tokenizers.models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                               eos_token="<eos>")
    cfg = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    emb = hf.from_pretrained(str(tmp_path), prompt=None, num_layers=2, pooling="mean")
    assert emb.lm.config._attn_implementation == hf.ATTENTION and emb.layers == [2, 3]
    ref = transformers.AutoModel.from_pretrained(tmp_path, attn_implementation="eager").eval()
    enc = tok(TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        h = ref(**enc).last_hidden_state
    n = enc["attention_mask"].sum(1)
    plain = emb.pooled(TEXTS, reroute=False)
    torch.testing.assert_close(plain["mean"], (h * enc["attention_mask"][..., None]).sum(1) / n[:, None],
                               atol=1e-5, rtol=1e-4)  # no re-routing: the model's own (grouped-query) attention
    routed = emb.embed(TEXTS)
    assert routed.shape == (4, 32) and not torch.allclose(routed, plain["mean"], atol=1e-4)
    emb.bias = float("-inf")
    torch.testing.assert_close(emb.embed(TEXTS), plain["mean"], atol=1e-5, rtol=1e-4)
    assert emb.select_layers(TEXTS * 4) == select_layers(emb.layer_ids, 2, range(1, 4))


def test_quick_reproduction_runs():
    from zoo.claims import VERDICTS, run_claim
    from zoo_kv_embedding.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3 and REPRODUCTION.task_options["corpus"] == "wiki"
    rows = [r for r in REPRODUCTION.rows if r.label in ("kv_embedding", "mean_pooling", "last_token_pooling")]
    claim = dataclasses.replace(REPRODUCTION, rows=rows, seeds=(0,))
    res = run_claim(claim, quick=True)
    kv, mean = res.rows["kv_embedding"], res.rows["mean_pooling"]
    assert kv["lm_final_loss"]["mean"] == mean["lm_final_loss"]["mean"]  # one frozen LM per seed, shared
    assert kv["mrr"]["mean"] != mean["mrr"]["mean"] and res.verdict in VERDICTS
