"""doc2formal plugin: the conformance kit, Model 1's EM, the ranker's invariances, and what tells it from BM25."""
from __future__ import annotations

import numpy as np
import torch

import zoo
from zoo.testing import check_plugin
from zoo_doc2formal import alignment as A
from zoo_doc2formal.model import Doc2Formal
from zoo_task_code_text.baselines import LexicalRanker
from zoo_task_code_text.data import Pair
from zoo_task_code_text.task import ranking_metrics

# descriptions say the verb with a synonym that never appears in the signature: overlap cannot match it
VERBS = {"erase": "delete", "fetch": "get", "build": "make", "examine": "check", "store": "put", "list": "scan"}
OBJECTS = ("user", "file", "order", "image", "token", "record", "page", "queue", "table", "cache")
FILLER = ("the", "a", "given", "current", "one", "stored", "new")


def _pairs(combos, seed):
    rng = np.random.default_rng(seed)
    out = []
    for verb, obj in combos:
        words = [verb, *rng.choice(FILLER, 2), obj]
        out.append(Pair(" ".join(words).capitalize() + ".", f"app.{VERBS[verb]}_{obj}({obj}_id, *, timeout)", "app"))
    return out


def _split():
    combos = [(v, o) for v in VERBS for o in OBJECTS]
    rng = np.random.default_rng(0)
    rng.shuffle(combos)
    return _pairs(combos[:42], 1), _pairs(combos[42:], 2)  # test combinations unseen in training


def test_conformance(hub):
    check_plugin("doc2formal")


def test_em_puts_mass_on_the_identifier_a_word_always_co_occurs_with():
    rng = np.random.default_rng(0)
    # words 1..8 each come with their own token k-1, three at a time; the other words of a pair are noise for it
    sources, targets = [], []
    for _ in range(300):
        ws = rng.choice(np.arange(1, 9), 3, replace=False)
        sources.append(list(ws))
        targets.append(list(rng.permutation(ws - 1)))
    table = A.em(sources, targets, n_src=9, n_tgt=8, iters=20)
    t = table.matrix().toarray()
    assert all(t[k, k - 1] > 0.9 for k in range(1, 9))  # from 3/8 by co-occurrence alone
    start = A.em(sources, targets, n_src=9, n_tgt=8, iters=1).matrix().toarray()
    assert all(start[k, k - 1] < 0.5 for k in range(1, 9))  # EM, not counting, concentrates it
    assert np.allclose(t[t.sum(1) > 0].sum(1), 1.0)  # t(. | word) is a distribution for every seen word


def test_the_ranker_ignores_candidate_order():
    train, test = _split()
    m = Doc2Formal()
    m.fit(train, steps=50, seed=0)
    cands = [p.signature for p in test]
    perm = np.random.default_rng(3).permutation(len(cands))
    a = m.rank(test[0].description, cands)
    b = m.rank(test[0].description, [cands[i] for i in perm])
    np.testing.assert_allclose(b, a[perm])


def test_an_unseen_description_still_ranks():
    train, test = _split()
    m = Doc2Formal()
    m.fit(train, steps=50, seed=0)
    cands = [p.signature for p in test]
    s = m.rank("Quux zorble frobnicates.", cands)  # no word seen in training
    assert s.shape == (len(cands),) and np.isfinite(s).all()
    s = m.rank("Zorble the cache.", cands)  # one known object: the candidates with it come first
    top = np.argsort(-s)[:3]
    assert all("cache" in cands[i] for i in top)


def test_learned_correspondences_beat_bm25_where_overlap_cannot_see_the_verb():
    train, test = _split()
    texts, cands = [p.description for p in test], [p.signature for p in test]
    m = Doc2Formal()
    m.fit(train, steps=100, seed=0)
    ours = ranking_metrics(m.score_matrix(texts, cands))
    bm25 = ranking_metrics(LexicalRanker("bm25").score_matrix(texts, cands))
    assert ours["acc@1"] > 0.8 and bm25["acc@1"] < 0.4 and ours["mrr"] > bm25["mrr"] + 0.3
    erase = m.words.index("erase") + 1  # the alignment learned the synonym
    assert m._tables()[0].prob(m.tokens.index("delete"), erase) > 0.3


def test_a_fitted_model_saves_and_reloads(tmp_path):
    train, test = _split()
    m = zoo.create("doc2formal")
    m.fit(train, steps=20, seed=1)
    zoo.save_pretrained(m, tmp_path / "d2f")
    again = zoo.create(f"local-dir:{tmp_path / 'd2f'}", pretrained=True)
    cands = [p.signature for p in test]
    np.testing.assert_allclose(again.rank(test[1].description, cands), m.rank(test[1].description, cands))
    assert isinstance(m(["erase one user"], cands), torch.Tensor)
