"""code_text: the mined pairs, the planted vulnerability rule, the metrics, the baselines and the contracts."""
import numpy as np
import pytest
import torch

from zoo_task_code_text import data as D
from zoo_task_code_text import task as T


def test_mined_pairs_are_real_unique_and_split_stably():
    pairs = D.stdlib_pairs()
    assert len(pairs) > 1500 and len({p.description for p in pairs}) == len(pairs)
    byname = {p.signature.split("(")[0]: p for p in pairs}
    assert "textwrap.dedent" in byname and byname["textwrap.dedent"].signature == "textwrap.dedent(text)"
    train, test = D.doc2sig_split(0)
    assert len(train) + len(test) == len(pairs) and 0.15 < len(test) / len(pairs) < 0.25
    assert D.doc2sig_split(0) == (train, test) and D.doc2sig_split(1) != (train, test)


def test_the_vulnerable_statement_is_the_only_one_the_rule_flags():
    b = D.vul_bags(300, seed=5)
    inv = {i: t for t, i in D.TOK.items()}
    assert b.label.mean() == 0.5 and ((b.culprit >= 0) == (b.label == 1)).all()
    for f in range(300):
        flagged = [j for j in range(int(b.mask[f].sum())) if D.is_vulnerable_statement([inv[i] for i in b.tokens[f, j] if i])]
        assert flagged == ([int(b.culprit[f])] if b.label[f] else [])


def test_ranking_metrics_on_known_answers():
    assert T.ranking_metrics(np.eye(4)) == {"acc@1": 1.0, "acc@5": 1.0, "mrr": 1.0}
    s = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 0.0], [3.0, 2.0, 1.0]])  # ranks 3, 1, 3
    assert T.ranking_metrics(s)["mrr"] == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)


def test_lexical_baselines_beat_chance_by_far_on_doc2sig():
    r = T.evaluate(T.build_baseline("bm25"), mode="doc2sig", baselines=["bow"])
    n = r.config["test"]
    assert r.metrics["acc@1"] > 20 / n and r.baselines["bow"]["mrr"] > 20 / n  # chance: acc@1 = 1/n


class _Oracle(torch.nn.Module):
    """Scores statements by the planted rule: perfect localisation, and logit > 0 exactly for vulnerable functions."""

    input_kind = "bags"

    def forward(self, tokens, mask):
        inv = {i: t for t, i in D.TOK.items()}
        s = torch.tensor([[float(D.is_vulnerable_statement([inv[int(i)] for i in st if i])) for st in f] for f in tokens])
        s = s.masked_fill(~mask, float("-inf"))
        return {"function_logit": s.max(-1).values * 2 - 1, "statement_scores": s}


def test_bag_scoring_gives_the_oracle_full_marks_and_a_trained_baseline_a_number():
    assert T.score_bags(_Oracle()) == {"f1": 1.0, "accuracy": 1.0, "top1": 1.0, "top3": 1.0}
    torch.manual_seed(0)
    m = T.build_baseline("mean_bag", params=2_000)
    r = T.evaluate(m, mode="vulloc", steps=5, baselines=["attn_mil"])
    assert {"f1", "top1", "top3", "accuracy"} <= set(r.metrics) and "attn_mil" in r.baselines
    assert abs(r.baselines["attn_mil"]["params"] - r.metrics["params"]) <= 0.1 * r.metrics["params"]


def test_left_to_right_infill_and_the_lm_mode_run_on_the_reference_gpt():
    from zoo_task_char_lm.task import reference_gpt

    m = reference_gpt(dim=16, depth=1, heads=2, block_size=32)
    ex = D.infill_examples(3, seed=0)
    assert len(ex) == 3 and all("\n" not in e.middle for e in ex)
    rate, how = T.infill_exact(m, ex)
    assert how == "left-to-right" and 0.0 <= rate <= 1.0


def test_contract_checks_and_errors_name_the_problem():
    bag = T.build_baseline("attn_mil")
    T.check_output(bag, bag(*T.example_input(bag)))
    assert T.example_input(T.build_baseline("bm25")) is None
    with pytest.raises(ValueError, match="mode 'vulloc' takes bags models"):
        T.evaluate(T.build_baseline("bm25"), mode="vulloc")
    with pytest.raises(ValueError, match="unknown mode"):
        T.evaluate(bag, mode="code")
    with pytest.raises(ValueError, match="not baselines of mode 'vulloc'"):
        T.evaluate(bag, mode="vulloc", steps=1, baselines=["bm25"])
