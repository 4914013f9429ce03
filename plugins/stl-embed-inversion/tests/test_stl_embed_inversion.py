"""stl-embed-inversion: the conformance kit, the decoder-only properties (causality, conditioning on the prefix) and a
short fit after which greedy decodes are valid formulae in valid token order."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_stl_embed_inversion.model import CPU, INVALID, PAPER, stl_embed_inversion
from zoo_task_stl_logic import syntax as Y
from zoo_task_stl_logic import task

TINY = {"d_model": 16, "heads": 2, "layers": 1}
DATA = {"n_train": 300, "n_test": 40, "n_traj": 60, "n_readout": 30, "n_anchors": 16}


def test_conformance(hub):
    check_plugin("stl-embed-inversion", overrides={"stl_embed_inversion": TINY})


def test_presets_and_overrides():
    assert stl_embed_inversion().embed_dim == CPU["embed_dim"] == task.DEFAULTS["n_anchors"]
    assert stl_embed_inversion(preset="paper").d_model == PAPER["d_model"]
    assert zoo.create("stl_embed_inversion", embed_dim=16).embed_dim == 16
    with pytest.raises(ValueError, match="preset"):
        stl_embed_inversion(preset="huge")


def test_decoder_is_causal_and_conditioned_on_the_embedding():
    torch.manual_seed(0)
    m = stl_embed_inversion(embed_dim=8, **TINY).eval()
    emb, ids = torch.randn(2, 8), torch.randint(3, len(Y.VOCAB), (2, 10))
    out = m(emb, ids)
    changed = ids.clone()
    changed[:, 6:] = torch.randint(3, len(Y.VOCAB), (2, 4))
    assert torch.allclose(m(emb, changed)[:, :6], out[:, :6], atol=1e-5)  # no peeking at later tokens
    assert not torch.allclose(m(emb + 1.0, ids)[:, 0], out[:, 0])  # the prefix conditions the first prediction


def test_a_short_fit_decodes_valid_formulae():
    d = task.dataset(0, **DATA)
    torch.manual_seed(0)
    m = stl_embed_inversion(embed_dim=DATA["n_anchors"], d_model=32, heads=2, layers=1, lr=3e-3)
    emb = torch.as_tensor(d.emb_train, dtype=torch.float32)
    untrained = m.decode(emb[:40])
    assert sum(not s.startswith(INVALID) for s in untrained) <= 4  # an untrained decoder writes no formulae
    fig = m.fit(emb, d.ids_train, steps=300, seed=0, batch_size=32)
    decoded = m.decode(torch.as_tensor(d.emb_test, dtype=torch.float32))
    valid = [s for s in decoded if not s.startswith(INVALID)]
    assert len(valid) >= 0.8 * len(decoded), (fig, decoded[:5])
    for s in valid:  # valid strings are formulae of the grammar, in the canonical infix form
        assert Y.to_string(Y.from_string(s)) == s
