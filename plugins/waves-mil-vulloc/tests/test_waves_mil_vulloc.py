"""waves-mil-vulloc plugin: the conformance kit, pseudo labels from function labels only, and localisation."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_task_code_text import data as D
from zoo_task_code_text import task
from zoo_waves_mil_vulloc.model import IGNORE, WAVES, pseudo_labels, waves_mil

TINY = {"dim": 8}


def test_conformance(hub):
    check_plugin("waves-mil-vulloc", overrides={"waves_mil": TINY})


def test_presets_and_errors():
    assert waves_mil().dim == 32 and waves_mil(preset="paper").dim == 128
    with pytest.raises(ValueError, match="preset"):
        waves_mil(preset="huge")
    with pytest.raises(ValueError, match="unknown option"):
        waves_mil(width=3)
    with pytest.raises(ValueError, match="fusion"):
        WAVES(fusion=2.0)


def test_pseudo_labels_follow_the_multiple_instance_rule():
    scores = torch.tensor([[0.3, 2.0, 1.5, -9.0], [5.0, 1.0, 0.0, 0.0], [0.0, 0.1, 7.0, 0.0]])
    mask = torch.tensor([[True, True, True, False], [True, True, True, True], [True, True, False, False]])
    labels = torch.tensor([1.0, 0.0, 1.0])
    got = pseudo_labels(scores, mask, labels, top_k=1)
    assert got.tolist() == [[IGNORE, 1.0, IGNORE, IGNORE], [0.0] * 4, [IGNORE, 1.0, IGNORE, IGNORE]]  # padding never top
    assert pseudo_labels(scores, mask, labels, top_k=2)[0].tolist() == [IGNORE, 1.0, 1.0, IGNORE]
    # a function's pseudo labels depend on its label and its scores only
    assert torch.equal(pseudo_labels(scores, mask, 1 - labels)[1], torch.tensor([1.0, IGNORE, IGNORE, IGNORE]))


def test_the_pseudo_label_loss_balances_positives_and_negatives():
    # one pseudo positive against four negatives: each class weighs half (unbalanced, the negatives' mean would
    # dominate and drive every function logit below 0: the first recorded run lost 2 of 5 seeds that way)
    net = WAVES(dim=8, pseudo_from=0).eval()
    net.steps.fill_(1)
    z = torch.tensor([[2.0, -1.0, -1.0, -1.0], [0.5, 0.5, 0.5, 0.5]])
    out = {"function_logit": torch.tensor([0.3, -0.2]), "statement_scores": z, "mask": torch.ones(2, 4, dtype=torch.bool)}
    y = torch.tensor([1.0, 0.0])
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    extra = net.loss(out, y) - bce(out["function_logit"], y)
    want = 0.5 * (bce(torch.tensor(2.0), torch.tensor(1.0)) + bce(torch.full((4,), 0.5), torch.zeros(4)))
    assert torch.allclose(extra, want, atol=1e-6)


def test_statement_scores_are_the_scorer_and_the_function_logit_pools_them():
    torch.manual_seed(0)
    net = WAVES(dim=16).eval()
    tokens, mask = task.example_input(net)
    mask = mask.clone()
    mask[1, 6:] = False
    out = net(tokens, mask)
    z = net.scorer(net.encode(tokens)).squeeze(-1)
    assert torch.allclose(out["statement_scores"][mask], z[mask]) and torch.isinf(out["statement_scores"][~mask]).all()
    for b in range(2):
        zz = z[b][mask[b]]
        assert torch.allclose(out["function_logit"][b], 0.5 * zz.max() + 0.5 * zz.mean(), atol=1e-6)
    # a statement's score is its own: reordering the statements reorders the scores (attention MIL shares this, but
    # its function logit is not a function of its statement scores; WAVES' is, monotone in each)
    perm = torch.tensor([7, 6, 5, 4, 3, 2, 1, 0])
    out_p = net(tokens[:, perm], mask[:, perm])
    assert torch.allclose(out_p["statement_scores"][0], out["statement_scores"][0][perm])


def test_training_never_reads_statement_labels(monkeypatch):
    # the task's loop with the culprit positions scrambled: the trained weights are bit-identical, so the statement
    # labels cannot have been read (WAVES.loss sees the output and the function labels only)
    real = task._bags

    def scrambled(split, shift):
        tokens, mask, label, culprit = real(split)
        return tokens, mask, label, torch.where(culprit >= 0, (culprit + shift) % 8, culprit)

    weights = []
    for shift in (0, 3):
        monkeypatch.setattr(task, "_bags", lambda split, s=shift: scrambled(split, s))
        torch.manual_seed(0)
        net = WAVES(dim=8, pseudo_from=2)
        task.train_bags(net, steps=6, seed=0)
        weights.append(net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def _planted(n: int, seed: int):
    """Bags of 6 statements where the vulnerable functions hold one unguarded write and nothing else shares its shape."""
    g = torch.Generator().manual_seed(seed)
    tok = D.TOK
    benign = [[tok["x"], tok["="], tok["y"], tok["+"], tok["1"]], [tok["return"], tok["z"]]]
    bad = [tok["buf"], tok["["], tok["i"], tok["]"], tok["="], tok["v"]]
    tokens = torch.zeros(n, 6, D.MAX_TOKENS, dtype=torch.long)
    for f in range(n):
        for s in range(6):
            row = benign[int(torch.randint(2, (1,), generator=g))]
            tokens[f, s, :len(row)] = torch.tensor(row)
    label = torch.arange(n) % 2
    where = torch.randint(6, (n,), generator=g)
    for f in range(1, n, 2):
        tokens[f, where[f]] = 0
        tokens[f, where[f], :len(bad)] = torch.tensor(bad)
    return tokens, torch.ones(n, 6, dtype=torch.bool), label, where


def test_a_planted_statement_is_localised_after_a_short_fit():
    torch.manual_seed(0)
    net = WAVES(dim=16, pseudo_from=20)
    tokens, mask, label, where = _planted(64, 0)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(60):
        loss = net.loss(net(tokens, mask), label)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    t2, m2, l2, w2 = _planted(40, 1)
    with torch.no_grad():
        out = net(t2, m2)
    vul = l2 == 1
    assert (out["statement_scores"][vul].argmax(1) == w2[vul]).float().mean() == 1.0
    assert ((out["function_logit"] > 0).long() == l2).float().mean() > 0.9


def test_registered():
    assert isinstance(zoo.create("waves_mil", dim=8), WAVES)
