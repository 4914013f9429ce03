"""The data of ``algorithmic_seq``, every generator seeded and every answer exact.

* **Associative recall** (Schlag et al. 2021, the fast-weight memory test): ``S`` key-value pairs then a query key;
  the answer is the value stored with it. Tokens: keys ``0..n_keys-1``, values ``n_keys..n_keys+n_values-1``, the
  query marker last. Keys are distinct within a sequence.
* **Pointer problems** (Vinyals et al. 2015): points uniform in the unit square (on [0, 1] for sorting); the target is
  a sequence of input positions closed by END (index ``N``): sorting (ascending order), the planar convex hull
  (counter-clockwise from its lowest-index vertex, as the Ptr-Net paper orders it) and the optimal TSP tour (from
  point 0, in the direction whose second city has the smaller index), found by brute force for ``N <= 9``.
* **SUBLEQ programs**: a one-instruction computer (``mem[b] -= mem[a]; if mem[b] <= 0: goto c``), a small assembler
  with labels, and a reference interpreter; the programs of the looped-transformer paper's examples (addition, a
  counter loop, minimum, negation, copy, multiplication by repeated addition).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

END = -1  # in targets: the END pointer is index N of an N-point problem; -1 here means "the END of this problem"
PAD = -100  # targets after END (ignored by the loss)


# ------------------------------------------------------------------------------------------ associative recall
@dataclass(frozen=True)
class RecallVocab:
    n_keys: int = 64
    n_values: int = 64

    @property
    def query(self) -> int:
        return self.n_keys + self.n_values

    @property
    def size(self) -> int:
        return self.n_keys + self.n_values + 1


def recall_batch(batch: int, pairs: int, *, rng: np.random.Generator, vocab: RecallVocab = RecallVocab(),
                 repeats: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(ids (batch, 2 * repeats * pairs + 2) int64, answers (batch,) int64)``: ``k1 v1 ... kM vM Q q``; the answer is
    the value stored last with key ``q``.

    ``repeats = 1``: ``pairs`` distinct keys, each stored once. ``repeats > 1`` (the update setting of Schlag et al.
    2021, §4.1 setting 2): the ``pairs`` distinct keys are stored once each, then ``(repeats - 1) * pairs`` more
    assignments re-store randomly chosen ones with new values, so a memory must overwrite, not only add.

    >>> ids, ans = recall_batch(2, 3, rng=np.random.default_rng(0))
    >>> ids.shape, bool(all(ids[i, 1 + 2 * list(ids[i, 0:6:2]).index(ids[i, -1])] == ans[i] for i in range(2)))
    ((2, 8), True)
    >>> ids, ans = recall_batch(1, 3, rng=np.random.default_rng(0), repeats=2)
    >>> ids.shape, int(ans[0]) == int(ids[0, 1 + 2 * max(j for j in range(6) if ids[0, 2 * j] == ids[0, -1])])
    ((1, 14), True)
    """
    if pairs < 1 or pairs > vocab.n_keys:
        raise ValueError(f"recall needs 1 <= pairs <= n_keys ({vocab.n_keys}) distinct keys; got {pairs}")
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    total = repeats * pairs
    keys = np.argsort(rng.random((batch, vocab.n_keys)), axis=1)[:, :pairs]
    values = vocab.n_keys + rng.integers(0, vocab.n_values, size=(batch, total))
    which = rng.integers(0, pairs, size=batch)
    query = keys[np.arange(batch), which]
    if repeats > 1:
        again = keys[np.arange(batch)[:, None], rng.integers(0, pairs, size=(batch, total - pairs))]
        keys = np.concatenate([keys, again], axis=1)
    ids = np.empty((batch, 2 * total + 2), dtype=np.int64)
    ids[:, 0:2 * total:2], ids[:, 1:2 * total:2] = keys, values
    ids[:, -2] = vocab.query
    ids[:, -1] = query
    last = total - 1 - np.argmax((keys == query[:, None])[:, ::-1], axis=1)  # the last assignment of the query key
    return ids, values[np.arange(batch), last].astype(np.int64)


# ------------------------------------------------------------------------------------------ pointer problems
def points(batch: int, n: int, dim: int, *, rng: np.random.Generator) -> np.ndarray:
    """``(batch, n, dim)`` float32 points uniform in ``[0, 1]^dim``."""
    return rng.random((batch, n, dim)).astype(np.float32)


def sort_order(x: np.ndarray) -> list[int]:
    """Positions of the 1-D values ``x (n, 1)`` in ascending order (ties by position)."""
    return [int(i) for i in np.argsort(x[:, 0], kind="stable")]


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def convex_hull(p: np.ndarray) -> list[int]:
    """Vertices of the convex hull of ``p (n, 2)`` counter-clockwise, starting at the lowest index (Andrew's monotone
    chain; collinear points on an edge are not vertices).

    >>> convex_hull(np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]]))
    [0, 1, 2, 3]
    """
    order = sorted(range(len(p)), key=lambda i: (p[i][0], p[i][1], i))
    lower: list[int] = []
    for i in order:
        while len(lower) >= 2 and _cross(p[lower[-2]], p[lower[-1]], p[i]) <= 0:
            lower.pop()
        lower.append(i)
    upper: list[int] = []
    for i in reversed(order):
        while len(upper) >= 2 and _cross(p[upper[-2]], p[upper[-1]], p[i]) <= 0:
            upper.pop()
        upper.append(i)
    hull = lower[:-1] + upper[:-1]
    start = hull.index(min(hull))
    return hull[start:] + hull[:start]


def polygon_area(p: np.ndarray, order: Sequence[int]) -> float:
    """Area of the polygon visiting ``p[order]`` (shoelace; 0 for fewer than three vertices)."""
    if len(order) < 3:
        return 0.0
    q = p[list(order)]
    return 0.5 * abs(float(np.dot(q[:, 0], np.roll(q[:, 1], -1)) - np.dot(q[:, 1], np.roll(q[:, 0], -1))))


def tour_length(p: np.ndarray, order: Sequence[int]) -> float:
    """Length of the closed tour visiting ``p[order]``."""
    q = p[list(order)]
    return float(np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1).sum())


def tsp_optimal(p: np.ndarray) -> list[int]:
    """The shortest closed tour of ``p (n, 2)`` by brute force over the (n-1)!/2 tours from point 0 (``n <= 9``), in
    the direction whose second city has the smaller index.

    >>> tsp_optimal(np.array([[0, 0], [1, 1], [1, 0], [0, 1]], dtype=float))
    [0, 2, 1, 3]
    """
    n = len(p)
    if n > 9:
        raise ValueError(f"brute-force TSP is limited to n <= 9 points (got {n}): {math.factorial(n - 1) // 2} tours")
    if n <= 3:
        return list(range(n))
    d = np.linalg.norm(p[:, None] - p[None], axis=-1)
    perms = np.array([q for q in itertools.permutations(range(1, n)) if q[0] < q[-1]], dtype=np.int64)
    tours = np.concatenate([np.zeros((len(perms), 1), dtype=np.int64), perms], axis=1)
    lengths = d[tours, np.roll(tours, -1, axis=1)].sum(axis=1)
    best = tours[int(np.argmin(lengths))]
    return [int(i) for i in best]


SOLVERS = {"sort": sort_order, "hull": convex_hull, "tsp": tsp_optimal}
DIMS = {"sort": 1, "hull": 2, "tsp": 2}


def pointer_batch(problem: str, batch: int, n: int, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(points (batch, n, d) float32, targets (batch, M) int64)``: each row the solver's positions, then END (``n``),
    then ``PAD`` up to the longest row."""
    if problem not in SOLVERS:
        raise ValueError(f"unknown pointer problem {problem!r}; choose from {sorted(SOLVERS)}")
    x = points(batch, n, DIMS[problem], rng=rng)
    answers = [SOLVERS[problem](row) + [n] for row in x]
    m = max(len(a) for a in answers)
    targets = np.full((batch, m), PAD, dtype=np.int64)
    for i, a in enumerate(answers):
        targets[i, :len(a)] = a
    return x, targets


# ------------------------------------------------------------------------------------------ SUBLEQ
HALT = "HALT"


@dataclass(frozen=True)
class Program:
    """A SUBLEQ program: ``code`` is a list of ``(label, a, b, c)`` (``label`` None or a name; ``a``/``b`` data
    names; ``c`` a label, None for the next instruction or ``HALT``), ``data`` the cells in order with their
    initial values (names in ``inputs`` are set per run), ``outputs`` the cells whose final values are the result,
    ``expected`` the Python function of the inputs they must equal."""

    name: str
    code: tuple
    data: tuple
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    expected: object
    input_range: tuple[int, int] = (-20, 20)


def assemble(program: Program, values: dict[str, int]) -> tuple[list[int], dict[str, int]]:
    """``(memory, addresses)``: the code as triples then the data cells; ``values`` set the inputs."""
    labels: dict[str, int] = {}
    for i, (label, *_rest) in enumerate(program.code):
        if label is not None:
            labels[label] = 3 * i
    base = 3 * len(program.code)
    addr = {name: base + j for j, (name, _v) in enumerate(program.data)}
    mem: list[int] = []
    for i, (_label, a, b, c) in enumerate(program.code):
        target = 3 * (i + 1) if c is None else (-1 if c == HALT else labels[c])
        mem += [addr[a], addr[b], target]
    for name, v in program.data:
        mem.append(int(values.get(name, v)))
    return mem, addr


def run(mem: Sequence[int], *, pc: int = 0, max_steps: int = 10_000) -> tuple[list[int], int, bool]:
    """The reference interpreter: ``(final memory, steps, halted)``; it halts when ``pc`` leaves the memory (a
    negative jump target is HALT) and stops unhalted after ``max_steps`` instructions."""
    m = list(mem)
    steps = 0
    while 0 <= pc <= len(m) - 3:
        if steps >= max_steps:
            return m, steps, False
        a, b, c = m[pc], m[pc + 1], m[pc + 2]
        if not (0 <= a < len(m) and 0 <= b < len(m)):
            raise ValueError(f"SUBLEQ: instruction at {pc} addresses {a}, {b} outside the {len(m)}-cell memory")
        m[b] -= m[a]
        pc = c if m[b] <= 0 else pc + 3
        steps += 1
    return m, steps, True


def _mov(src: str, dst: str, label: str | None = None) -> list[tuple]:
    """dst = src (through the zero cell Z)."""
    return [(label, dst, dst, None), (None, src, "Z", None), (None, "Z", dst, None), (None, "Z", "Z", None)]


def _add(src: str, dst: str, label: str | None = None) -> list[tuple]:
    """dst += src."""
    return [(label, src, "Z", None), (None, "Z", dst, None), (None, "Z", "Z", None)]


def _programs() -> dict[str, Program]:
    halt = [(None, "Z", "Z", HALT)]
    progs = [
        Program("negate", tuple([("start", "z", "z", None), (None, "x", "z", None)] + halt),
                (("x", 0), ("z", 0), ("Z", 0)), ("x",), ("z",), lambda x: (-x,)),
        Program("copy", tuple(_mov("x", "z", "start") + halt), (("x", 0), ("z", 0), ("Z", 0)), ("x",), ("z",),
                lambda x: (x,)),
        Program("add", tuple(_mov("x", "z", "start") + _add("y", "z") + halt),
                (("x", 0), ("y", 0), ("z", 0), ("Z", 0)), ("x", "y"), ("z",), lambda x, y: (x + y,)),
        # acc counts the loop's iterations: n >= 1 of them
        Program("counter", tuple([("start", "acc", "acc", None), ("loop", "neg1", "acc", None),
                                  (None, "one", "n", "done"), (None, "Z", "Z", "loop"), ("done", "Z", "Z", HALT)]),
                (("n", 0), ("acc", 0), ("one", 1), ("neg1", -1), ("Z", 0)), ("n",), ("acc",), lambda n: (n,),
                input_range=(1, 20)),
        # z = min(x, y): t = x - y; if t <= 0 then z = x else z = y
        Program("min", tuple(_mov("x", "t", "start") + [(None, "y", "t", "xle")] + _mov("y", "z") + [(None, "Z", "Z", HALT)]
                             + _mov("x", "z", "xle") + halt),
                (("x", 0), ("y", 0), ("t", 0), ("z", 0), ("Z", 0)), ("x", "y"), ("z",), lambda x, y: (min(x, y),)),
        # z = x * y for y >= 1: add x to z, y times
        Program("mul", tuple([("start", "z", "z", None)] + _add("x", "z", "loop") + [(None, "one", "y", "done"),
                                                                                     (None, "Z", "Z", "loop"),
                                                                                     ("done", "Z", "Z", HALT)]),
                (("x", 0), ("y", 0), ("z", 0), ("one", 1), ("Z", 0)), ("x", "y"), ("z",), lambda x, y: (x * y,),
                input_range=(1, 9)),
    ]
    return {p.name: p for p in progs}


PROGRAMS = _programs()


def program_cases(name: str, n: int, *, seed: int = 0) -> list[tuple[list[int], dict[str, int], tuple[int, ...]]]:
    """``n`` runs of program ``name`` on seeded random inputs: ``(memory, addresses, expected outputs)``."""
    if name not in PROGRAMS:
        raise ValueError(f"unknown SUBLEQ program {name!r}; choose from {sorted(PROGRAMS)}")
    prog = PROGRAMS[name]
    rng = np.random.default_rng(seed)
    lo, hi = prog.input_range
    cases = []
    for _ in range(n):
        values = {k: int(rng.integers(lo, hi + 1)) for k in prog.inputs}
        mem, addr = assemble(prog, values)
        cases.append((mem, addr, tuple(prog.expected(*[values[k] for k in prog.inputs]))))
    return cases
