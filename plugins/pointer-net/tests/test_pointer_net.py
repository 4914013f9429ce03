"""pointer-net plugin: the conformance kit and what tells a pointer from fixed output classes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_pointer_net.model import PAPER, PointerNet, pointer_net
from zoo_task_algorithmic_seq import data as D
from zoo_task_algorithmic_seq import task

TINY = {"hidden": 8}


def test_conformance(hub):
    check_plugin("pointer-net", overrides={"pointer_net": TINY})


def test_presets_init_and_errors():
    net = pointer_net(preset="paper")
    assert net.hidden == PAPER["hidden"] == 512 and net.encoder.num_layers == 1
    assert all(p.abs().max() <= 0.08 for p in net.parameters())  # the paper's U[-0.08, 0.08]
    with pytest.raises(ValueError, match="preset"):
        pointer_net(preset="huge")
    with pytest.raises(ValueError, match="unknown option"):
        pointer_net(width=3)


def test_permuting_the_encoded_points_permutes_the_output_columns():
    # the output distribution is over input positions: reorder the encoder states and the log-prob columns follow
    # exactly (Eq. 3 scores each key on its own). seq2seq's attention only blends the states into a context, so the
    # same reordering leaves its fixed class distribution unchanged: class k stays "position k".
    torch.manual_seed(0)
    pts, _ = task.example_input(PointerNet(hidden=16))
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    net = PointerNet(hidden=16).eval()
    keys, state = net.encode(pts)
    start = net.start.expand(2, -1)
    lp, _ = net.step(start, state, keys)
    lp_perm, _ = net.step(start, state, torch.cat([keys[:, :6][:, perm], keys[:, 6:]], 1))
    assert torch.allclose(lp_perm[:, :6], lp[:, :6][:, perm], atol=1e-6) and torch.allclose(lp_perm[:, 6], lp[:, 6])
    assert not torch.allclose(lp_perm, lp, atol=1e-3)
    base = task.build_baseline("seq2seq", mode="hull", positions=6).eval()
    with torch.no_grad():
        enc, (h, c) = base.encoder(base.embed(pts))
        inp = base.start.expand(2, -1)
        a, _ = base._step(inp, (h[-1], c[-1]), enc)
        b, _ = base._step(inp, (h[-1], c[-1]), enc[:, perm])
    assert torch.allclose(a, b, atol=1e-5)  # invariant, not equivariant: it cannot point


def test_sizes_never_seen_and_end_handling():
    net = PointerNet(hidden=16).eval()
    pts = torch.rand(3, 40, 2)
    tgt = torch.tensor([[39, 0, 40, D.PAD]] * 3)
    logp = net(pts, tgt)
    assert logp.shape == (3, 4, 41) and torch.isfinite(logp).all()  # every one of 40 positions and END can be named
    assert torch.allclose(logp.exp().sum(-1), torch.ones(3, 4))
    base = task.build_baseline("seq2seq", mode="hull")  # trained-size classes only: position 39 is unreachable
    assert torch.isinf(base(pts, tgt)[..., 39]).all()
    out = net.decode(pts, 12)
    assert out.shape == (3, 12) and int(out.max()) <= 40
    ended = (out == 40).int().cumsum(1) > 0
    assert (out[ended] == 40).all()  # after the first END only END


def test_beam_search_finds_a_valid_more_probable_sequence():
    torch.manual_seed(1)
    net = PointerNet(hidden=16).eval()
    pts = torch.rand(2, 6, 2)
    greedy, beam = net.decode(pts, 7), net.decode(pts, 7, beam=4)
    by_default = PointerNet(hidden=16, beam=4).eval()
    by_default.load_state_dict(net.state_dict())
    assert torch.equal(by_default.decode(pts, 7), beam)  # the task's decode(points, max_len) gets the beam
    for row in beam.tolist():
        seq = row[:row.index(6)] if 6 in row else row
        assert len(set(seq)) == len(seq)  # no point twice

    @torch.no_grad()
    def logp(seq):
        t = torch.tensor([seq[:seq.index(6) + 1] if 6 in seq else seq])
        return float(net(pts[:1], t).gather(-1, t.clamp(max=6)[..., None]).sum())
    tours = PointerNet(hidden=16, beam=3, visit_all=True).eval().decode(pts, 7)
    assert all(sorted(r[:6]) == list(range(6)) and r[6] == 6 for r in tours.tolist())  # valid tours only
    g, b = greedy[0].tolist(), beam[0].tolist()
    if len(set(g[:g.index(6)] if 6 in g else g)) == len(g[:g.index(6)] if 6 in g else g):
        assert logp(b) >= logp(g) - 1e-5


def test_short_fit_points_beyond_the_training_size():
    # the reproduction in miniature: sort trained on 3-5 numbers, asked for the smallest of 12 (positions 5..11 were
    # never targets in training). seq2seq at the same size cannot name them at all.
    torch.manual_seed(0)
    net = pointer_net(in_dim=1, hidden=24)
    task.train(net, "sort", steps=150, sizes=(3, 5), lr=1e-2, seed=0, batch_size=32)
    x, t = D.pointer_batch("sort", 200, 12, rng=np.random.default_rng(5))
    first = net.decode(torch.from_numpy(x), 1)[:, 0].numpy()
    assert (first == t[:, 0]).mean() > 0.5
    assert (first >= 5).any()


def test_registered():
    assert isinstance(zoo.create("pointer_net", hidden=8), PointerNet)
