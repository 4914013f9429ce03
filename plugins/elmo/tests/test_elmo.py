"""elmo plugin: the conformance kit, the text contract, and what tells a biLM's layers from static vectors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_elmo.model import CPU, LAYERS, PAPER, _reverse, elmo

TINY = {"filters": ((1, 4), (2, 4)), "proj_dim": 8, "lstm_dim": 16, "max_chars": 8}


def test_conformance(hub):
    check_plugin("elmo", overrides={"elmo": TINY})


def test_presets_and_overrides():
    assert elmo().proj_dim == CPU["proj_dim"] and sum(n for _, n in PAPER["filters"]) == 2048
    paper = elmo(preset="paper", lstm_dim=16, proj_dim=8, filters=((1, 4),))  # the paper's sizes, shrunk to build
    assert paper.max_chars == 50 and paper.epochs == PAPER["epochs"]
    assert PAPER["lstm_dim"] == 4096 and PAPER["proj_dim"] == 512 and PAPER["highway"] == 2
    with pytest.raises(ValueError, match="preset"):
        elmo(preset="huge")


def _corpus(n=600, seed=0):
    # two topics (letters a*, b*); "amb" takes its sense from the sentence's topic
    rng = np.random.default_rng(seed)
    words = [[t + chr(ord("a") + i) + "x" for i in range(8)] for t in "ab"]
    sents = []
    for k in range(n):
        s = [str(w) for w in rng.choice(words[k % 2], 4)]
        s.insert(int(rng.integers(5)), "amb")
        sents.append(s)
    return sents


def test_reverse_keeps_padding_at_the_end():
    x = torch.arange(8.0).reshape(2, 4, 1)
    r = _reverse(x, torch.tensor([4, 2]))
    assert r[:, :, 0].tolist() == [[3, 2, 1, 0], [5, 4, 6, 7]]


def test_layers_and_contract():
    torch.manual_seed(0)
    model = elmo(**TINY).eval()  # eval: no dropout in forward
    h = model.layers(["amb ba", "a b c"])
    assert [tuple(v.shape) for v in h] == [(LAYERS, 2, 16), (LAYERS, 3, 16)]
    # layer 0 is [x; x], the same vector for both halves; it does not depend on the context
    assert torch.equal(h[0][0, :, :8], h[0][0, :, 8:])
    other = model.layers(["amb aa ab ac"])[0]
    assert torch.allclose(other[0, 0], h[0][0, 0]) and not torch.allclose(other[2, 0], h[0][2, 0])
    x = model.embed(["amb ba", "", "AMB ba!"])
    assert x.shape == (3, 16) and not x[1].any() and torch.allclose(x[0], x[2])
    assert torch.allclose(model(["amb ba"]), x[:1])
    chars, lengths = model.char_ids([["amb", "ba"]])
    assert chars.shape == (1, 4, 8)
    assert torch.allclose(model(chars, lengths)[0, 1:3], model.embed_tokens(["amb ba"])[0], atol=1e-6)


def test_the_backward_lm_reads_the_right_context_and_the_forward_lm_the_left():
    torch.manual_seed(0)
    model = elmo(**TINY).eval()
    a, b = model.layers(["aa amb bb"])[0], model.layers(["aa amb cc"])[0]
    fwd, bwd = slice(0, 8), slice(8, 16)
    # at "amb" (position 1) the forward half sees only "aa": equal; the backward half sees the changed right word
    assert torch.allclose(a[1, 1, fwd], b[1, 1, fwd]) and not torch.allclose(a[1, 1, bwd], b[1, 1, bwd])


def test_fit_lowers_the_loss_and_mix_learns_weights_that_sum_to_one():
    torch.manual_seed(0)
    sents = _corpus()
    model = elmo(**TINY, epochs=1, batch_size=32, lr=1e-2)
    first = model.fit(sents[:64], seed=0, epochs=1)["final_train_loss"]
    fig = model.fit(sents, seed=0, epochs=2)
    assert fig["vocabulary"] == 17 and fig["final_train_loss"] < first - 0.5
    texts = [" ".join(s) for s in sents[:80]]
    pos = [s.index("amb") for s in sents[:80]]
    out = model.fit_mix(texts, pos, [k % 2 for k in range(80)], ["amb"] * 80, steps=30)
    w = model.mix_weights()
    assert abs(sum(w) - 1) < 1e-6 and out["mix_w0"] < 1 / 3  # the context-free layer cannot tell the senses
    # the contextual layers separate the two senses of "amb"; the token layer cannot (the same vector)
    test = _corpus(40, seed=1)
    texts, pos = [" ".join(s) for s in test], [s.index("amb") for s in test]
    tok = torch.stack([v[p] for v, p in zip(model.embed_tokens(texts), pos, strict=True)])
    tok0 = torch.stack([v[p] for v, p in zip(model.embed_tokens(texts, layer=0), pos, strict=True)])
    assert torch.allclose(tok0, tok0[:1].expand_as(tok0), atol=1e-5)
    sense = torch.tensor([k % 2 for k in range(40)]).bool()
    u = torch.nn.functional.normalize(tok, dim=1)
    c0, c1 = u[~sense].mean(0), u[sense].mean(0)
    assert ((u @ (c1 - c0) > 0) == sense).float().mean() > 0.7  # a static vector scores 0.5 (a tie)


def test_fit_is_deterministic_under_its_seed_whatever_the_process_drew_before():
    sents = _corpus(64)
    a, b = elmo(**TINY), elmo(**TINY)  # constructed from different global random states
    torch.rand(3)
    a.fit(sents, seed=3, epochs=1)
    torch.rand(5)
    b.fit(sents, seed=3, epochs=1)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_fitted_model_saves_and_reloads(tmp_path):
    model = zoo.create("elmo", **TINY, epochs=1)
    model.fit(_corpus(64), seed=0)
    zoo.save_pretrained(model, tmp_path / "elmo")
    again = zoo.create(f"local-dir:{tmp_path / 'elmo'}", pretrained=True)
    assert again.vocab == model.vocab and torch.allclose(again.embed(["amb aax"]), model.embed(["amb aax"]))


@pytest.mark.slow
def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_elmo.reproduce import REPRODUCTION, ROWS

    assert len(REPRODUCTION.seeds) >= 5
    res = run_claim(REPRODUCTION, quick=True)
    rows = res.rows
    assert rows[ROWS["static"]]["sense_acc"]["mean"] == 0.5 and rows[ROWS["token"]]["sense_acc"]["mean"] == 0.5
    assert rows[ROWS["mix"]]["sense_acc"]["mean"] > 0.6 and res.verdict in ("reproduced", "not reproduced",
                                                                            "inconclusive")
