"""A looped transformer with constructed weights that runs SUBLEQ (Giannou et al. 2023, "Looped Transformers as
Programmable Computers", arXiv:2301.13196, §3-§4).

The input is a **punchcard** ``X (B, 1 + n, d)``: column 0 is the scratchpad, columns ``1..n`` are the ``n`` memory
cells of a von Neumann SUBLEQ machine (code and data in one memory, as ``zoo_task_algorithmic_seq.data.run``
executes it). Numbers are ``N``-bit two's complement in the paper's +-1 binary encoding (``N = bits``, fixed by the
preset); each memory column carries its value bits and its **positional encoding** ``p_i`` (the +-1 bits of its address
``i``, so ``p_i . p_i = N`` and ``p_i . p_j <= N - 2`` for ``i != j``). The scratchpad carries the registers: the
program counter, the memory size limit, the instruction operands, the operand values, the result and flags.

One pass of the five layers (``forward``) executes one instruction ``mem[b] -= mem[a]; if mem[b] <= 0: goto c else
pc += 3``; ``run`` loops the same layers until the halt flag is set. Each layer is a standard encoder layer, ``X + Attn(X)``
then ``X + W2 relu(W1 X + b1) + b2``, its matrices written by ``build_layers`` (nothing is trained):

1. MLP: ``pc + 1, pc + 2, pc + 3`` (binary increments) and the halt flag (``pc < 0`` or ``pc > n - 3``, or a fault);
   clears the operand registers.
2. Attention, 3 heads: **read the instruction** ``a, b, c = mem[pc], mem[pc + 1], mem[pc + 2]``: the scratchpad's
   query is ``lambda * pc`` (a +-1 vector), the keys are the positional encodings, so the softmax at temperature
   ``lambda`` is close to a hardmax on the column whose address is ``pc`` (§3, read). MLP: error correction (rounds
   the read bits back to exactly +-1) and zeroes what the memory columns' own queries read.
3. Attention, 2 heads: **read memory** ``mem[a], mem[b]`` with ``a``, ``b`` as queries. MLP: error correction; an
   address outside the memory sets the fault flag (the reference interpreter raises there too).
4. MLP: **subtract** ``r = mem[b] - mem[a]`` (mod 2^N), the flag ``mem[b] - mem[a] <= 0`` and the overflow flag,
   all exact ReLU step functions of integer-valued linear forms of the bits.
5. Attention, 1 head: **write** ``mem[b] <- r``: every memory column queries with its own encoding plus a unit bonus
   that only the scratchpad's key carries, keyed there by ``b``: column ``b`` prefers the scratchpad by a score gap of
   ``lambda`` and every other column itself by ``lambda`` (§3, write). MLP: the memory cell's multiplexer (new value or
   old) and the **conditional branch** ``pc <- c if r <= 0 else pc + 3`` (unchanged once halted).

Exactness bound (stated, and measured by the reproduction's control rows): every MLP rounds its attention-fed inputs
with a tolerance of 1/2, so a read (score gap ``2 lambda`` to any other column) is exact when
``2 n e^{-2 lambda} < 1/2`` and a write (gap ``lambda``) when ``3 n e^{-lambda} < 1/2``; together
``lambda > ln(6 n)`` (``temperature_bound``) for a punchcard of ``n`` columns. The presets use ``lambda = 16``, above
the bound for every memory the bit width can address.

Deviations from the paper, and why:

- **5 layers per instruction, not the paper's 13** (its abstract's looped 13-layer transformer for its instruction
  set). Our arithmetic needs fewer layers: bit ``j`` of ``x - y`` is a step function with three thresholds of the
  integer ``(x mod 2^{j+1}) - (y mod 2^{j+1})``, which is linear in the bits, so one ReLU layer subtracts and compares
  where the paper's general building blocks take several (a later reimplementation describes them as flip the bits,
  add one, add); the three program-counter increments share one layer, and the branch shares the write layer. The
  stages (read instruction, read memory, subtract, write, branch, error correction after every read) are the paper's.
- Von Neumann memory: instructions are memory cells (the task's format), so the instruction is read by three heads
  at ``pc, pc + 1, pc + 2`` rather than from one instruction column, and addresses share the value bit width
  (``n <= 2^(N-1) - 1`` cells).
- A finite temperature (``lambda = 16``) above the bound above replaces the paper's limit argument; values beyond the
  bit width raise ``OverflowError`` (checked on the input, and by an overflow flag the layers set while running).
- The punchcard is float64, so the integer-valued forms (up to ``2^(N+5)``) are exact for ``bits <= 40``.

Sources: the abstract and the catalog (punchcard, constant depth, 13 layers), secondary summaries of the paper's
binary positional encodings and attention read/write; the paper's full text and the authors' code were not read, so
the layer-by-layer wiring, the rounding MLPs and the arithmetic are this module's own construction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

PRESETS = {"cpu": {"bits": 8}, "paper": {"bits": 16}}  # the paper leaves N free; 16 bits is our "paper" machine
TEMPERATURE = 16.0
LAYERS = 5
_TOL_GATE = 8.0  # gate for +-1 / {0, 1} channels: larger than twice any such pre-activation


def temperature_bound(columns: int) -> float:
    """The softmax temperature above which every read and write of a ``columns``-column punchcard is exact:
    ``ln(6 * columns)`` (see the module docstring).

    >>> round(temperature_bound(51), 3)
    5.724
    """
    return math.log(6 * columns)


@dataclass(frozen=True)
class Layout:
    """Channel indices of the punchcard's ``d`` features for ``bits``-bit numbers."""

    bits: int

    @property
    def names(self) -> tuple[tuple[str, int], ...]:
        n = self.bits
        return (("scr", 1), ("mem", 1), ("pos", n), ("val", n), ("pc", n), ("lim", n), ("pc1", n), ("pc2", n),
                ("pc3", n), ("a", n), ("b", n), ("c", n), ("ma", n), ("mb", n), ("r", n), ("wr", n), ("sel", 1),
                ("leq", 1), ("halt", 1), ("ovf", 1), ("flt", 1))

    def __getitem__(self, name: str) -> list[int]:
        start = 0
        for key, width in self.names:
            if key == name:
                return list(range(start, start + width))
            start += width
        raise KeyError(f"no punchcard channel {name!r}; channels are {[k for k, _ in self.names]}")

    @property
    def d(self) -> int:
        return sum(w for _, w in self.names)


# ------------------------------------------------------------------------------------------ layers
class LoopedLayer(nn.Module):
    """One encoder layer: ``X + sum_h softmax(X Wq_h (X Wk_h)^T) X Wv_h Wo_h``, then ``X + relu(X W1 + b1) W2 + b2``
    (no layer norm; the softmax temperature is folded into ``Wq``; ``heads = 0`` is an MLP-only layer)."""

    def __init__(self, d: int, heads: int, head_dim: int, hidden: int) -> None:
        super().__init__()
        self.wq = nn.Parameter(torch.zeros(heads, d, head_dim, dtype=torch.float64), requires_grad=False)
        self.wk = nn.Parameter(torch.zeros(heads, d, head_dim, dtype=torch.float64), requires_grad=False)
        self.wv = nn.Parameter(torch.zeros(heads, d, head_dim, dtype=torch.float64), requires_grad=False)
        self.wo = nn.Parameter(torch.zeros(heads, head_dim, d, dtype=torch.float64), requires_grad=False)
        self.fc1 = nn.Linear(d, hidden, dtype=torch.float64)
        self.fc2 = nn.Linear(hidden, d, dtype=torch.float64)
        for p in (*self.fc1.parameters(), *self.fc2.parameters()):
            p.requires_grad_(False)
            p.data.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.wq.shape[0]:
            q = torch.einsum("bnd,hde->bhne", x, self.wq)
            k = torch.einsum("bnd,hde->bhne", x, self.wk)
            v = torch.einsum("bnd,hde->bhne", x, self.wv)
            att = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
            x = x + torch.einsum("bhne,hed->bnd", att @ v, self.wo)
        return x + self.fc2(torch.relu(self.fc1(x)))


class _MLP:
    """Collects ReLU units ``coef * relu(w . x + bias)`` written to output channels, then fills ``fc1``/``fc2``."""

    def __init__(self) -> None:
        self.units: list[tuple[dict[int, float], float, dict[int, float]]] = []

    def unit(self, w: dict[int, float], bias: float, out: dict[int, float]) -> None:
        self.units.append((dict(w), float(bias), dict(out)))

    def linear(self, w: dict[int, float], out: dict[int, float]) -> None:
        """Adds the linear form ``w . x`` (any sign) to ``out``: relu(z) - relu(-z)."""
        self.unit(w, 0.0, out)
        self.unit({i: -v for i, v in w.items()}, 0.0, {o: -c for o, c in out.items()})

    def clear(self, channels: list[int]) -> None:
        """Zeroes the channels (the residual adds minus their value)."""
        for ch in channels:
            self.linear({ch: 1.0}, {ch: -1.0})

    def step(self, z: dict[int, float], z0: float, gates: dict[int, float], out: dict[int, float]) -> None:
        """Adds ``out * [z >= 0]`` for an integer-valued ``z = z . x + z0`` (flat within 1/4 of any integer), off
        when any gate channel is on (``gates`` maps channel -> weight subtracted, large enough to switch it off)."""
        for bias, sign in ((1.5, 1.0), (0.5, -1.0)):
            w = {i: 2 * v for i, v in z.items()}
            for g, k in gates.items():
                w[g] = w.get(g, 0.0) - k
            self.unit(w, 2 * z0 + bias, {o: sign * c for o, c in out.items()})

    def fill(self, layer: LoopedLayer) -> None:
        if len(self.units) != layer.fc1.out_features:
            raise AssertionError(f"layer built with {layer.fc1.out_features} hidden units, wired {len(self.units)}")
        with torch.no_grad():
            for h, (w, bias, out) in enumerate(self.units):
                for i, v in w.items():
                    layer.fc1.weight[h, i] += v
                layer.fc1.bias[h] = bias
                for o, c in out.items():
                    layer.fc2.weight[o, h] += c


def _prefix(chs: list[int], j: int) -> tuple[dict[int, float], float]:
    """``x mod 2^(j+1)`` of the +-1 bits in ``chs`` (least significant first) as ``(weights, constant)``."""
    return {chs[k]: 2.0 ** (k - 1) for k in range(j + 1)}, (2.0 ** (j + 1) - 1) / 2


def _signed(chs: list[int]) -> tuple[dict[int, float], float]:
    """The two's complement integer of the +-1 bits in ``chs`` as ``(weights, constant)``."""
    n = len(chs)
    w = {chs[k]: 2.0 ** (k - 1) for k in range(n - 1)}
    w[chs[-1]] = -(2.0 ** (n - 2))
    return w, -0.5


def _add(a: tuple[dict[int, float], float], b: tuple[dict[int, float], float], scale: float = 1.0):
    w = dict(a[0])
    for i, v in b[0].items():
        w[i] = w.get(i, 0.0) + scale * v
    return w, a[1] + scale * b[1]


def _bits_of_sum(mlp: _MLP, form, thresholds: list[tuple[float, float]], out_ch: int, gates: dict[int, float],
                 on: int) -> None:
    """Writes the +-1 bit ``2 * sum_t sign_t [form >= t] - 1`` to ``out_ch`` (the -1 only where channel ``on`` is 1)."""
    w, w0 = form
    for t, sign in thresholds:
        mlp.step(w, w0 - t, gates, {out_ch: 2.0 * sign})
    mlp.unit({on: 1.0}, 0.0, {out_ch: -1.0})


def build_layers(bits: int, temperature: float) -> list[LoopedLayer]:
    """The five layers of one SUBLEQ step for ``bits``-bit numbers (see the module docstring)."""
    L = Layout(bits)
    d, n = L.d, bits
    big = 2.0 ** (n + 5)  # gate for integer-valued forms: beyond twice their largest magnitude
    far = 2.0 ** (n + 1)  # added to a comparison to force it true (negative pc, a fault, an overflow)
    scr, mem = L["scr"][0], L["mem"][0]
    halt, leq, ovf, flt, sel = L["halt"][0], L["leq"][0], L["ovf"][0], L["flt"][0], L["sel"][0]
    scratch_gate = {mem: big}  # scratchpad registers: off in memory columns
    layers = []

    # 1. pc + 1, pc + 2, pc + 3; the halt flag; clear the landing registers of layer 2
    m = _MLP()
    for k, dst in ((1, "pc1"), (2, "pc2"), (3, "pc3")):
        L_dst = L[dst]
        for j in range(n):
            form = _add(_prefix(L["pc"], j), ({}, float(k % 2 ** (j + 1))))  # in [0, 2^(j+2))
            p = 2.0 ** j
            _bits_of_sum(m, form, [(p, 1.0), (2 * p, -1.0), (3 * p, 1.0)], L_dst[j], scratch_gate, scr)
        m.clear(L_dst)
    z = _add(_add(_signed(L["pc"]), _signed(L["lim"]), -1.0), ({L["pc"][-1]: far / 2, ovf: far, flt: far}, far / 2 - 1))
    m.step(*z, scratch_gate, {halt: 1.0})
    m.clear([halt])
    m.clear(L["a"] + L["b"] + L["c"])
    layers.append((0, m))

    # 2. read the instruction: a, b, c <- mem[pc], mem[pc + 1], mem[pc + 2]; then round and clear
    heads2 = [("pc", "a"), ("pc1", "b"), ("pc2", "c")]
    m = _MLP()
    for _src, dst in heads2:
        _snap(m, L[dst], mem)
    m.clear(L["ma"] + L["mb"])
    layers.append((heads2, m))

    # 3. read memory: ma, mb <- mem[a], mem[b]; round; addresses outside 0..n-1 set the fault flag
    heads3 = [("a", "ma"), ("b", "mb")]
    m = _MLP()
    for _src, dst in heads3:
        _snap(m, L[dst], mem)
    for src in ("a", "b"):
        z = _add(_add(_signed(L[src]), _signed(L["lim"]), -1.0), ({L[src][-1]: far / 2}, far / 2 - 3))
        m.step(*z, {mem: big, halt: big}, {flt: 1.0})
    layers.append((heads3, m))

    # 4. subtract: r = mb - ma (mod 2^N), leq = [mb - ma <= 0], overflow
    m = _MLP()
    for j in range(n):
        form = _add(_prefix(L["mb"], j), _prefix(L["ma"], j), -1.0)  # in (-2^(j+1), 2^(j+1))
        p = 2.0 ** j
        _bits_of_sum(m, form, [(-p, 1.0), (0.0, -1.0), (p, 1.0)], L["r"][j], scratch_gate, scr)
    m.clear(L["r"])
    t = _add(_signed(L["mb"]), _signed(L["ma"]), -1.0)
    neg_t = ({i: -v for i, v in t[0].items()}, -t[1])
    m.step(*neg_t, scratch_gate, {leq: 1.0})
    m.clear([leq])
    half = 2.0 ** (n - 1)
    running = {mem: big, halt: big, flt: big}  # a faulty read is reported as the fault, not as an overflow
    m.step(t[0], t[1] - half, running, {ovf: 1.0})
    m.step(neg_t[0], neg_t[1] - half - 1, running, {ovf: 1.0})
    layers.append((0, m))

    # 5. write mem[b] <- r where running; branch pc <- c if leq else pc + 3 (kept when halted)
    m = _MLP()
    for j in range(n):
        wr, val = L["wr"][j], L["val"][j]
        # new bit = [sel and wr > 0] + [not sel and val > 0], each a step flat beyond 1/2 of its +-1 target
        for w in ({wr: 1.0, sel: 1.0}, {val: 1.0, sel: -2.0}):
            base = -1.0 if sel in w and w[sel] > 0 else 0.0
            m.unit({**{i: 2 * v for i, v in w.items()}, scr: -_TOL_GATE}, 2 * base, {val: 2.0})
            m.unit({**{i: 2 * v for i, v in w.items()}, scr: -_TOL_GATE}, 2 * base - 1, {val: -2.0})
        m.unit({mem: 1.0}, 0.0, {val: -1.0})
        m.clear([val])
        pc = L["pc"][j]
        for src, w_leq, bias in ((L["c"][j], 2.0, -2.0), (L["pc3"][j], -2.0, 0.0)):
            for sign in (1.0, -1.0):
                m.unit({src: sign, leq: w_leq, halt: -2.0, mem: -_TOL_GATE}, bias, {pc: sign})
        for sign in (1.0, -1.0):
            m.unit({pc: sign, halt: 2.0, mem: -_TOL_GATE}, -2.0, {pc: sign})
        m.clear([pc])
    m.clear(L["wr"] + [sel])
    layers.append(("write", m))

    built = []
    for heads, m in layers:
        n_heads = 0 if heads == 0 else 1 if heads == "write" else len(heads)
        layer = LoopedLayer(d, n_heads, n + 1, len(m.units))
        m.fill(layer)
        with torch.no_grad():
            if heads == "write":
                for i, (p, r, wr) in enumerate(zip(L["pos"], L["r"], L["wr"], strict=True)):
                    layer.wq[0, p, i] = temperature
                    layer.wk[0, p, i] = 1.0
                    layer.wk[0, L["b"][i], i] = 1.0
                    layer.wv[0, r, i] = 1.0
                    layer.wo[0, i, wr] = 1.0
                layer.wq[0, mem, n] = temperature  # the bonus only the scratchpad's key carries
                layer.wk[0, scr, n] = 1.0
                layer.wv[0, scr, n] = 1.0  # sel = running (scratchpad and not halted)
                layer.wv[0, halt, n] = -1.0
                layer.wo[0, n, sel] = 1.0
            elif heads:
                for h, (src, dst) in enumerate(heads):
                    for i in range(n):
                        layer.wq[h, L[src][i], i] = temperature
                        layer.wk[h, L["pos"][i], i] = 1.0
                        layer.wv[h, L["val"][i], i] = 1.0
                        layer.wo[h, i, L[dst][i]] = 1.0
        built.append(layer)
    return built


def _snap(m: _MLP, chs: list[int], mem: int) -> None:
    """Error correction: ``x <- clamp(2x, -1, 1)`` on the scratchpad (exact +-1 from within 1/2), 0 elsewhere."""
    for ch in chs:
        m.unit({ch: 2.0, mem: -_TOL_GATE}, 1.0, {ch: 1.0})
        m.unit({ch: 2.0, mem: -_TOL_GATE}, -1.0, {ch: -1.0})
        m.unit({mem: -1.0}, 1.0, {ch: -1.0})  # relu(1 - mem) = scr: the clamp's -1
        m.clear([ch])


# ------------------------------------------------------------------------------------------ the machine
class LoopedTransformerComputer(nn.Module):
    """The looped transformer: ``forward(punchcard)`` is one pass (one SUBLEQ instruction), ``run(memory)`` the loop.

    >>> model = looped_transformer_computer()
    >>> model.run(torch.tensor([[3, 4, -1, 7, 0]]), max_steps=10).tolist()  # mem[4] -= mem[3]; 0 <= 0: halt
    [[3, 4, -1, 7, -7]]
    """

    input_kind = "machine"

    def __init__(self, bits: int = 8, temperature: float = TEMPERATURE, preset: str | None = None,
                 strict: bool = True) -> None:
        super().__init__()
        if not 4 <= bits <= 40:
            raise ValueError(f"bits must be in 4..40 (float64 holds the integer forms exactly up to 40), got {bits}")
        self.bits, self.temperature, self.preset, self.strict = bits, float(temperature), preset, strict
        self.layout = Layout(bits)
        self.layers = nn.ModuleList(build_layers(bits, self.temperature))

    @property
    def d(self) -> int:
        return self.layout.d

    @property
    def max_cells(self) -> int:
        """The largest memory the bit width addresses (pc + 3 must stay a positive N-bit number)."""
        return 2 ** (self.bits - 1) - 1

    def _width(self) -> str:
        return f"bits={self.bits}" + (f" (preset {self.preset!r})" if self.preset else "")

    def forward(self, punchcard: torch.Tensor) -> torch.Tensor:
        x = punchcard
        for layer in self.layers:
            x = layer(x)
        return x

    def _to_bits(self, v: torch.Tensor) -> torch.Tensor:
        k = torch.arange(self.bits, device=v.device)
        return ((v.unsqueeze(-1) >> k) & 1).to(torch.float64) * 2 - 1  # two's complement (torch's >> is arithmetic)

    def encode(self, memory: torch.Tensor, pc: int = 0) -> torch.Tensor:
        """The punchcard ``(B, 1 + n, d)`` float64 of ``memory (B, n)`` (integers), the program counter at ``pc``."""
        memory = torch.as_tensor(memory)
        if memory.ndim != 2 or memory.dtype.is_floating_point:
            raise ValueError(f"memory must be a (B, n) integer tensor, got {tuple(memory.shape)} {memory.dtype}")
        b, n = memory.shape
        lo, hi = -(2 ** (self.bits - 1)), 2 ** (self.bits - 1) - 1
        if n > self.max_cells:
            raise OverflowError(f"a memory of {n} cells needs addresses beyond {self._width()}: at most "
                                f"{self.max_cells} cells; build with a larger bits= or preset='paper'")
        if memory.numel() and (int(memory.min()) < lo or int(memory.max()) > hi):
            raise OverflowError(f"memory values {int(memory.min())}..{int(memory.max())} do not fit {self._width()}, "
                                f"the range {lo}..{hi}; build with a larger bits= or preset='paper'")
        L, dev = self.layout, memory.device
        x = torch.zeros(b, 1 + n, self.d, dtype=torch.float64, device=dev)
        x[:, 0, L["scr"][0]] = 1.0
        x[:, 1:, L["mem"][0]] = 1.0
        x[:, 1:, L["pos"][0]:L["pos"][-1] + 1] = self._to_bits(torch.arange(n, device=dev))
        x[:, 1:, L["val"][0]:L["val"][-1] + 1] = self._to_bits(memory.long())
        x[:, 0, L["pc"][0]:L["pc"][-1] + 1] = self._to_bits(torch.tensor(pc, device=dev))
        x[:, 0, L["lim"][0]:L["lim"][-1] + 1] = self._to_bits(torch.tensor(n - 3, device=dev))
        return x

    def _decode(self, bits: torch.Tensor) -> torch.Tensor:
        ones = (bits > 0).long()
        weights = 2 ** torch.arange(self.bits, device=bits.device)
        weights[-1] = -weights[-1]
        return (ones * weights).sum(-1)

    def decode(self, punchcard: torch.Tensor) -> torch.Tensor:
        """The memory ``(B, n)`` long held by a punchcard."""
        L = self.layout
        return self._decode(punchcard[:, 1:, L["val"][0]:L["val"][-1] + 1])

    def registers(self, punchcard: torch.Tensor) -> dict[str, torch.Tensor]:
        """The scratchpad's program counter (long) and flags (bool) per punchcard."""
        L, s = self.layout, punchcard[:, 0]
        out: dict[str, torch.Tensor] = {"pc": self._decode(s[:, L["pc"][0]:L["pc"][-1] + 1])}
        for f in ("halt", "ovf", "flt"):
            out[f] = s[:, L[f][0]] > 0.5
        return out

    @torch.no_grad()
    def run(self, memory: torch.Tensor, *, max_steps: int = 10_000, pc: int = 0,
            return_steps: bool = False) -> Any:
        """Execute the SUBLEQ programs in ``memory (B, n)`` from ``pc`` until each halts (``pc`` outside ``0..n-3``)
        or ``max_steps`` instructions: the final memory ``(B, n)`` long (and the instructions executed per row).

        Raises ``OverflowError`` when a value leaves the bit width and ``ValueError`` for an instruction addressing a
        cell outside the memory (as the reference interpreter does); with ``strict=False`` such a row stops there and
        its memory is returned as it is (the reproduction's control rows count it as a failed run)."""
        memory = torch.as_tensor(memory)
        dev = next(self.parameters()).device
        x = self.encode(memory.to(dev), pc=pc)
        steps = torch.zeros(x.shape[0], dtype=torch.long, device=dev)
        for _ in range(max_steps):
            x = self(x)
            halted = self.registers(x)["halt"]  # set by this pass's first layer: the pass executed nothing
            steps += (~halted).long()
            if bool(halted.all()):
                break
        regs = self.registers(x)
        if self.strict and bool(regs["flt"].any()):
            rows = regs["flt"].nonzero().flatten().tolist()
            raise ValueError(f"SUBLEQ: an instruction addresses a cell outside the {memory.shape[1]}-cell memory "
                             f"(rows {rows})")
        if self.strict and bool(regs["ovf"].any()):
            rows = regs["ovf"].nonzero().flatten().tolist()
            raise OverflowError(f"SUBLEQ overflow in rows {rows}: a result left {self._width()}, the range "
                                f"{-(2 ** (self.bits - 1))}..{2 ** (self.bits - 1) - 1}; build with a larger bits= "
                                "or preset='paper'")
        out = self.decode(x).to(memory.device)
        return (out, steps.to(memory.device)) if return_steps else out


def looped_transformer_computer(preset: str = "cpu", bits: int | None = None, temperature: float | None = None,
                                strict: bool = True) -> LoopedTransformerComputer:
    """The SUBLEQ looped transformer. ``preset="cpu"``: 8-bit numbers (values -128..127, up to 127 cells, d = 119);
    ``preset="paper"``: 16 bits (d = 231; the paper fixes no width). ``temperature`` is the softmax's lambda
    (default 16, above ``temperature_bound`` for any memory the width addresses).

    >>> m = looped_transformer_computer()
    >>> m.bits, m.d, len(m.layers)
    (8, 119, 5)
    """
    if preset not in PRESETS:
        raise ValueError(f"looped_transformer_computer preset must be one of {sorted(PRESETS)}, got {preset!r}")
    return LoopedTransformerComputer(bits=bits if bits is not None else PRESETS[preset]["bits"],
                                     temperature=TEMPERATURE if temperature is None else temperature, preset=preset,
                                     strict=strict)
