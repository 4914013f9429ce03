"""byte-recconv-sentence-ae: the conformance kit, the recursion (one shared block per direction), the mirror, a fit."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_byte_recconv_sentence_ae.model import (
    CPU,
    PAPER,
    Down,
    RecConvAE,
    Up,
    byte_conv_ae_unshared,
    byte_recconv_ae,
    levels,
    to_bytes,
)

TINY = {"channels": 8, "length": 16, "code_len": 2}


def test_conformance(hub):
    check_plugin("byte-recconv-sentence-ae", overrides={"byte_recconv_ae": TINY, "byte_conv_ae_unshared": TINY})


def test_presets_and_overrides():
    m = byte_recconv_ae()
    assert (m.channels, m.length, m.code_len, m.dim) == (CPU["channels"], CPU["length"], CPU["code_len"], 512)
    assert byte_recconv_ae(preset="paper").length == PAPER["length"] and byte_recconv_ae(length=128).length == 128
    with pytest.raises(ValueError, match="preset"):
        byte_recconv_ae(preset="huge")
    with pytest.raises(ValueError, match="power of two"):
        byte_recconv_ae(length=48)


def test_one_block_is_reused_at_every_level():
    # the recursion: the parameter count does not depend on L = 2^k; separate weights per level grow with k
    counts = {k: count_params(byte_recconv_ae(channels=8, length=2 ** k, code_len=2)) for k in (3, 5, 8)}
    assert len(set(counts.values())) == 1
    unshared = [count_params(byte_conv_ae_unshared(channels=8, length=2 ** k, code_len=2)) for k in (3, 5, 8)]
    assert unshared[0] < unshared[1] < unshared[2] and unshared[0] > counts[3]
    m = byte_recconv_ae(channels=8, length=64, code_len=2)
    assert sum(isinstance(x, Down) for x in m.modules()) == 1 and sum(isinstance(x, Up) for x in m.modules()) == 1
    calls = []
    m.down.register_forward_hook(lambda mod, i, o: calls.append(("down", i[0].shape[-1])))
    m.up.register_forward_hook(lambda mod, i, o: calls.append(("up", o.shape[-1])))
    m.decode(m.encode(to_bytes(["recursion"], 64)))
    assert calls == [("down", 64), ("down", 32), ("down", 16), ("down", 8), ("down", 4),
                     ("up", 4), ("up", 8), ("up", 16), ("up", 32), ("up", 64)]
    # the same weights run on a longer input with one more level; the per-level model cannot
    assert m.encode(to_bytes(["x"], 128)).shape == (1, 16) and m.decode(torch.zeros(1, 16), 128).shape == (1, 128, 256)
    with pytest.raises(ValueError, match="levels"):
        byte_conv_ae_unshared(channels=8, length=64, code_len=2).encode(to_bytes(["x"], 128))


def test_the_decoder_mirrors_the_encoder_shapes():
    m = byte_conv_ae_unshared(channels=8, length=32, code_len=4)
    enc, dec = [], []
    for i, blk in enumerate(m.down_levels):
        blk.register_forward_hook(lambda mod, inp, out, i=i: enc.append((i, tuple(inp[0].shape), tuple(out.shape))))
    for i, blk in enumerate(m.up_levels):
        blk.register_forward_hook(lambda mod, inp, out, i=i: dec.append((i, tuple(out.shape), tuple(inp[0].shape))))
    logits = m.decode(m.encode(to_bytes(["mirror", "image"], 32)))
    assert levels(32, 4) == 3 and logits.shape == (2, 32, 256)
    assert enc == sorted(dec) and [i for i, *_ in dec] == [2, 1, 0]  # up level i undoes down level i, in reverse


def test_bytes_and_the_embed_contract():
    assert to_bytes(["é"], 4).tolist() == [[195, 169, 0, 0]]  # UTF-8 bytes, padded with 0
    torch.manual_seed(0)
    m = RecConvAE(**TINY)
    x = m.embed(["One sentence.", "Two here. And another one!", "One sentence." + "x" * 40])
    assert x.shape == (3, 16) and x.dtype == torch.float32
    parts = m.embed(["Two here.", "And another one!"])
    assert torch.allclose(x[1], parts.mean(0), atol=1e-6)  # a text: the mean of its sentences
    assert torch.allclose(m(["One sentence."]), x[:1], atol=1e-6)  # forward on texts == embed
    long_a, long_b = "a" * 16 + "tail one", "a" * 16 + "other tail"
    assert torch.equal(m.embed([long_a]), m.embed([long_b]))  # only the first L bytes are read


def test_a_sentence_autoencodes_after_a_short_fit():
    torch.manual_seed(0)
    m = RecConvAE(channels=32, length=32, code_len=4)
    sents = ["Return the sum of a and b.", "Open the file for reading."]
    assert m.reconstruction(sents)["byte_acc"] < 0.2
    fig = m.fit(sents, steps=150, seed=0, batch_size=4, lr=1e-2)
    rec = m.reconstruction(sents)
    assert rec["byte_acc"] == 1.0 and rec["exact"] == 1.0 and fig["final_train_loss"] < 0.1
    assert m.to_text(m.decode(m.encode(to_bytes(sents[:1], 32))))[0] == sents[0]


def test_fitted_model_saves_and_reloads(tmp_path):
    torch.manual_seed(0)
    model = zoo.create("byte_recconv_ae", **TINY)
    model.fit(["a b c.", "d e f."], steps=2, seed=0)
    zoo.save_pretrained(model, tmp_path / "ae")
    again = zoo.create(f"local-dir:{tmp_path / 'ae'}", pretrained=True)
    assert torch.equal(again.embed(["a b c."]), model.embed(["a b c."]))


def test_recursive_and_per_level_models_train_apart_on_real_sentences():
    # reproduction-like, fast: both rows at equal steps on the same docstring sentences; their figures differ
    from zoo_byte_recconv_sentence_ae.reproduce import REPRODUCTION
    from zoo_task_embedding_quality.data import load_corpus

    texts = load_corpus("lee").texts[:400]
    figs = {}
    for name in ("byte_recconv_ae", "byte_conv_ae_unshared"):
        torch.manual_seed(0)
        m = zoo.create(name, channels=16, length=32, code_len=4)
        figs[name] = (m.fit(texts, steps=20, seed=0, batch_size=8), count_params(m))
    (rec, p_rec), (uns, p_uns) = figs["byte_recconv_ae"], figs["byte_conv_ae_unshared"]
    assert p_rec < p_uns and rec["final_train_loss"] != uns["final_train_loss"]
    assert len(REPRODUCTION.seeds) >= 3 and {c.metric for c in REPRODUCTION.checks} == {"heldout_byte_acc", "topic_acc"}


@pytest.mark.slow
def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_byte_recconv_sentence_ae.reproduce import REPRODUCTION

    res = run_claim(REPRODUCTION, quick=True)
    assert res.rows["byte_recconv_ae"]["params"]["mean"] < res.rows["unshared"]["params"]["mean"]
    assert res.rows["byte_recconv_ae"]["topic_acc"]["mean"] != res.rows["tfidf"]["topic_acc"]["mean"]
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")


def test_the_shipped_stdlib_tag_loads_offline_and_autoencodes_unseen_sentences():
    from zoo_task_embedding_quality.data import load_corpus

    model = zoo.create("byte_recconv_ae.stdlib")
    assert model.zoo.pretrained and model.zoo.source == "package"  # the shipped snapshot, no network
    news = load_corpus("lee").texts[:300]  # news sentences: never seen by the docstring-trained recipe
    torch.manual_seed(0)
    assert model.reconstruction(news)["byte_acc"] > 0.6 > RecConvAE().reconstruction(news)["byte_acc"]  # 0.73 vs 0.004
