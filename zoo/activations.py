"""Activations of any model, and the analysis tools applied to them (the tool contract).

Papers that ship a measurement rather than a model (CKA, probes, intrinsic dimension, ...) register **tools**
(``ToolSpec`` through the ``zoo_tools`` hook). Every tool takes an ``ActivationSet``, so it runs the same way on a
zoo model, on any ``torch.nn.Module`` and on arrays a user already has:

    >>> acts = zoo.activations(model, x, layers=["blocks.0", "head"], labels=y)   # doctest: +SKIP
    >>> zoo.analyze("linear-cka", acts)                                          # doctest: +SKIP
    >>> zoo.analyze("linear-cka", {"a": xa, "b": xb})                            # doctest: +SKIP

``zoo analyze TOOL MODEL`` does the same from the command line on the model's task data (``TaskSpec.probe_data``).
"""
from __future__ import annotations

import fnmatch
import math
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ZooError

POOLS = (None, "mean", "first", "last", "flatten")


@dataclass
class ActivationSet:
    """Per-layer activations of the same N inputs, with what is known about the inputs.

    ``layers[name]`` is a float32 array (N, D), or (N, T, D) when tokens were kept; ``labels`` (N,) class labels;
    ``concepts`` named (N,) or (N, k) arrays (attributes, planted factors); ``meta`` where the activations came from
    (model, layer names as the module tree gives them, pooling). Tools read a layer with ``matrix``, which enforces
    what their statistic needs.
    """

    layers: dict[str, np.ndarray]
    labels: np.ndarray | None = None
    concepts: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.layers, Mapping) or not self.layers:
            raise ValueError("ActivationSet needs at least one layer: a dict of name -> (N, D) or (N, T, D) array")
        layers: dict[str, np.ndarray] = {}
        for name, value in self.layers.items():
            arr = _as_array(value, f"layer {name!r}")
            if arr.ndim == 1:
                arr = arr[:, None]  # one feature per input
            if arr.ndim not in (2, 3):
                raise ValueError(f"layer {name!r} has shape {arr.shape}: ActivationSet holds (N, D) or (N, T, D) "
                                 "arrays; flatten or pool it first (zoo.activations(..., pool='mean'|'flatten'))")
            layers[str(name)] = arr.astype(np.float32, copy=False)
        counts = {name: a.shape[0] for name, a in layers.items()}
        if len(set(counts.values())) != 1:
            raise ValueError(f"every layer must hold the same N inputs; got {counts}")
        self.layers = layers
        n = self.n
        if self.labels is not None:
            self.labels = np.asarray(self.labels)
            if self.labels.shape[:1] != (n,):
                raise ValueError(f"labels has shape {self.labels.shape}, expected ({n},): one label per input")
        concepts = {}
        for name, value in dict(self.concepts).items():
            arr = np.asarray(value)
            if arr.shape[:1] != (n,):
                raise ValueError(f"concept {name!r} has shape {arr.shape}, expected ({n},) or ({n}, k)")
            concepts[str(name)] = arr
        self.concepts = concepts

    @property
    def n(self) -> int:
        """The number of inputs."""
        return next(iter(self.layers.values())).shape[0]

    @property
    def names(self) -> list[str]:
        return list(self.layers)

    def select(self, layers: str | Sequence[str] | None = None) -> list[str]:
        """The layer names a tool was asked for, in that order: every layer when None, one name, or a list; a name
        this set does not hold raises a ValueError naming the ones it has.

        >>> ActivationSet({"a": np.zeros((2, 1)), "b": np.ones((2, 1))}).select("b")
        ['b']
        """
        wanted = self.names if layers is None else ([layers] if isinstance(layers, str) else list(layers))
        missing = [n for n in wanted if n not in self.layers]
        if missing:
            raise ValueError(f"no layer {missing} in this ActivationSet (it has {self.names})")
        return wanted

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.layers:
            raise KeyError(f"no layer {name!r} in this ActivationSet; it has {', '.join(self.layers)}")
        return self.layers[name]

    def matrix(self, name: str | None = None, *, min_samples: int = 2, pool: str = "mean",
               needs_labels: bool = False) -> np.ndarray:
        """Layer ``name`` (the only one when None) as an (N, D) float64 matrix, checked for what a statistic needs:
        at least ``min_samples`` inputs, finite values, labels when ``needs_labels``. Tokens are pooled by ``pool``
        ("mean", "first", "last" or "flatten")."""
        if name is None:
            if len(self.layers) != 1:
                raise ValueError(f"this ActivationSet has {len(self.layers)} layers ({', '.join(self.layers)}): "
                                 "name the one to use")
            name = next(iter(self.layers))
        x = self[name]
        if x.ndim == 3:
            x = _pool(x, pool, f"layer {name!r}")
        if x.shape[0] < min_samples:
            raise ValueError(f"layer {name!r} has {x.shape[0]} inputs; this statistic needs at least {min_samples}")
        bad = ~np.isfinite(x)
        if bad.any():
            rows = np.unique(np.nonzero(bad)[0])
            raise ValueError(f"layer {name!r} holds {int(bad.sum())} NaN/inf values (inputs {rows[:5].tolist()}"
                             f"{' ...' if len(rows) > 5 else ''}); drop those inputs or fix the model before measuring")
        if needs_labels and self.labels is None:
            raise ValueError("this statistic needs labels: pass labels= to zoo.activations or ActivationSet")
        return x.astype(np.float64)

    def pooled(self, how: str = "mean") -> ActivationSet:
        """The same set with every (N, T, D) layer pooled over its tokens to (N, D)."""
        layers = {k: (_pool(v, how, f"layer {k!r}") if v.ndim == 3 else v) for k, v in self.layers.items()}
        return ActivationSet(layers, self.labels, self.concepts, {**self.meta, "pool": how})

    @classmethod
    def from_arrays(cls, arrays: Any, labels: Any = None, **concepts: Any) -> ActivationSet:
        """An ActivationSet from arrays a user has: one (N, D) array (layer "x"), a list (layers "0", "1", ...) or
        a dict of name -> array."""
        if isinstance(arrays, ActivationSet):
            return arrays
        if isinstance(arrays, Mapping):
            layers = dict(arrays)
        elif isinstance(arrays, (list, tuple)):
            layers = {str(i): a for i, a in enumerate(arrays)}
        else:
            layers = {"x": arrays}
        return cls(layers, labels, concepts, {"source": "arrays"})


def check_matrix(x: Any, what: str = "X", *, min_samples: int = 2, vector: bool = True) -> np.ndarray:
    """``x`` (an array or a tensor) as a finite (N, D) float64 array with N >= ``min_samples``, else a ValueError
    naming the requirement; a 1-D array is N inputs of one feature unless ``vector`` is False. The check every tool's
    statistic starts from.

    >>> check_matrix([[0.0, 1.0], [2.0, 3.0]]).shape
    (2, 2)
    """
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{what} holds {arr.dtype} values; representations must be numeric (N, D) arrays")
    if arr.ndim == 1 and vector:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{what} has shape {arr.shape}; expected an (N, D) matrix (rows: inputs, columns: features)")
    if arr.shape[1] < 1:
        raise ValueError(f"{what} has shape {arr.shape}: at least one feature is needed")
    if arr.shape[0] < min_samples:
        raise ValueError(f"{what} has {arr.shape[0]} samples; this statistic needs at least {min_samples}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} holds {int((~np.isfinite(arr)).sum())} NaN/inf values; drop those inputs first")
    return arr.astype(np.float64)


def _as_array(value: Any, what: str) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor, on any device
        value = value.detach().float().cpu().numpy()
    try:
        arr = np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - any unconvertible object gets the same message
        raise ValueError(f"{what} is a {type(value).__name__}, not an array") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{what} holds {arr.dtype} values; activations must be numbers")
    if arr.ndim == 0:
        raise ValueError(f"{what} is a scalar; activations are (N, D) arrays")
    return arr


def _pool(x: np.ndarray, how: str | None, what: str) -> np.ndarray:
    if how == "mean":
        return x.mean(axis=1)
    if how == "first":
        return x[:, 0]
    if how == "last":
        return x[:, -1]
    if how == "flatten":
        return x.reshape(x.shape[0], -1)
    raise ValueError(f"{what}: unknown pooling {how!r}; choose from {[p for p in POOLS if p]}")


def layer_names(model: Any) -> list[str]:
    """The names ``activations(layers=...)`` takes: every submodule's name as ``model.named_modules()`` gives it,
    plus "output" (the model's own output)."""
    return [n for n, _ in model.named_modules() if n] + ["output"]


def _choose_layers(model: Any, layers: str | Sequence[str] | None) -> list[str]:
    available = layer_names(model)
    if layers is None:  # the model's top-level blocks and its output
        return [n for n, _ in model.named_children()] + ["output"]
    wanted = [layers] if isinstance(layers, str) else list(layers)
    chosen: list[str] = []
    for pattern in wanted:
        hits = [n for n in available if n == pattern] or [n for n in available if fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            import difflib

            close = difflib.get_close_matches(pattern, available, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            shown = ", ".join(available[:25]) + (" ..." if len(available) > 25 else "")
            raise ValueError(f"{type(model).__name__} has no layer {pattern!r}; {hint}its layers: {shown} "
                             "(names as model.named_modules() gives them; shell patterns like 'blocks.*.mlp' work)")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def _first_tensor(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (list, tuple)):
        for o in out:
            t = _first_tensor(o)
            if t is not None:
                return t
    if isinstance(out, Mapping):
        for o in out.values():
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _batches(inputs: Any, batch_size: int) -> tuple[int, Any]:
    """(N, an iterator of per-batch positional-argument tuples) for a tensor, a tuple of tensors or a list."""
    import torch

    if isinstance(inputs, torch.Tensor) or hasattr(inputs, "__array__") and not isinstance(inputs, (list, tuple)):
        inputs = (torch.as_tensor(inputs),)
    elif isinstance(inputs, list):
        inputs = (inputs,)
    if not isinstance(inputs, tuple) or not inputs:
        raise ValueError(f"inputs must be a tensor, a tuple of tensors (positional arguments) or a list (texts); "
                         f"got {type(inputs).__name__}")
    n = len(inputs[0])
    for i, a in enumerate(inputs):
        if len(a) != n:
            raise ValueError(f"input {i} has {len(a)} rows, input 0 has {n}: every argument is batched along axis 0")
    return n, ((tuple(a[s:s + batch_size] for a in inputs)) for s in range(0, n, batch_size))


def activations(model: Any, inputs: Any, *, layers: str | Sequence[str] | None = None, pool: str | None = None,
                labels: Any = None, concepts: Mapping[str, Any] | None = None, batch_size: int = 256,
                pretrained: bool | None = None) -> ActivationSet:
    """Run ``model`` on ``inputs`` in eval mode without gradients and keep what ``layers`` output.

    Args:
        model: a ``torch.nn.Module`` (any, not only zoo's) or a zoo model name (created, ``pretrained`` as
            ``zoo.create`` takes it).
        inputs: a tensor (N, ...), a tuple of tensors (positional arguments, each batched along axis 0) or a list.
        layers: names from ``model.named_modules()`` or shell patterns ("blocks.*.mlp"); "output" is the model's
            output; default: its top-level children and its output. A module that returns a tuple or dict gives
            its first tensor.
        pool: tokens and maps: None keeps (N, T, D) and flattens maps with more axes; "mean" averages tokens (and
            the spatial axes of (N, C, H, W) maps); "first"/"last" take one token; "flatten" flattens everything.
        labels, concepts: what is known about each input, carried to the tools.

    The data goes to the model's device and the activations come back to the CPU as float32 arrays.
    """
    import torch

    from .task import model_device

    if isinstance(model, str):
        from .factory import create

        name = model
        model = create(name, pretrained=bool(pretrained) or "." in name.split(":")[-1])
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"activations() needs a torch.nn.Module or a zoo model name, not {type(model).__name__}")
    if pool not in POOLS:
        raise ValueError(f"unknown pooling {pool!r}; choose from {list(POOLS)}")
    chosen = _choose_layers(model, layers)
    modules = dict(model.named_modules())
    n_inputs, batches = _batches(inputs, batch_size)
    # each layer's rows go straight into one preallocated array (no list of batches to concatenate: half the peak
    # memory, one copy less)
    got: dict[str, np.ndarray] = {}
    filled = dict.fromkeys(chosen, 0)

    def keep(name: str, out: Any) -> None:
        t = _first_tensor(out)
        if t is None:
            raise ValueError(f"layer {name!r} returned {type(out).__name__} holding no tensor; choose another layer")
        x = t.detach().float()
        if x.ndim >= 4:
            x = x.mean(dim=tuple(range(2, x.ndim))) if pool == "mean" else x.flatten(1)
        elif x.ndim == 3 and pool is not None:
            x = {"mean": lambda v: v.mean(1), "first": lambda v: v[:, 0], "last": lambda v: v[:, -1],
                 "flatten": lambda v: v.flatten(1)}[pool](x)
        arr, start = x.cpu().numpy(), filled[name]
        if name not in got:
            got[name] = np.empty((n_inputs, *arr.shape[1:]), dtype=np.float32)
        if arr.shape[1:] != got[name].shape[1:] or start + arr.shape[0] > n_inputs:
            raise ValueError(f"layer {name!r} gave {tuple(arr.shape)} with {start} of {n_inputs} rows already kept "
                             f"as {tuple(got[name].shape[1:])}: a layer must run once per forward pass with one row "
                             "per input and the same shape in every batch; choose another layer or pool it "
                             "(pool='mean')")
        got[name][start:start + arr.shape[0]] = arr
        filled[name] = start + arr.shape[0]

    hooks = [modules[n].register_forward_hook(lambda _m, _i, out, n=n: keep(n, out)) for n in chosen if n != "output"]
    dev = model_device(model)
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            for args in batches:
                args = tuple(a.to(dev) if isinstance(a, torch.Tensor) else a for a in args)
                out = model(*args)
                if "output" in filled:
                    keep("output", out)
    finally:
        for h in hooks:
            h.remove()
        model.train(was)
    missing = [n for n in chosen if not filled[n]]
    if missing:
        raise ValueError(f"layers {missing} never ran in the forward pass of {type(model).__name__}; choose layers "
                         "the forward uses (zoo.activations.layer_names(model) lists them all)")
    short = {n: k for n, k in filled.items() if k != n_inputs}
    if short:
        raise ValueError(f"layers {sorted(short)} kept {sorted(set(short.values()))} rows for {n_inputs} inputs: they "
                         "ran in only some forward passes; choose layers every forward pass uses")
    layers_out = {n: got[n] for n in chosen}
    prov = getattr(model, "zoo", None)
    meta = {"model": getattr(prov, "id", None) or type(model).__name__, "layers": chosen, "pool": pool,
            "n": n_inputs}
    return ActivationSet(layers_out, labels, dict(concepts or {}), meta)


def _plain(value: Any, where: str) -> Any:
    """``value`` as JSON-able plain data (numpy scalars and arrays become numbers and lists)."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "detach"):
        return value.detach().cpu().tolist()
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ZooError(f"{where}: key {k!r} is not a string; a tool returns plain data (JSON)")
            out[k] = _plain(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise ZooError(f"{where} is a {type(value).__name__}; a tool returns plain data (numbers, strings, lists, dicts)")


def analyze(tool: str, data: Any, *, inputs: Any = None, layers: str | Sequence[str] | None = None,
            labels: Any = None, out_dir: str | None = None, **options: Any) -> dict[str, Any]:
    """Apply analysis tool ``tool`` (``zoo list --tools``) and return its plain-data result.

    ``data`` is an ``ActivationSet``, arrays (one (N, D) array, a list or a dict of them: ``ActivationSet.from_arrays``)
    or a model (then ``inputs`` is required and ``layers`` chooses what to record, as in ``activations``). ``out_dir``
    receives the tool's figures (their paths under ``"artifacts"``); ``options`` are the tool's own.

    Raises:
        ToolNotFound / PluginBroken: no such tool, or its plugin is broken.
        ValueError: the activations do not meet what the tool needs (the message names the requirement).
        ZooError: the tool failed in its own code, or returned something that is not plain data.
    """
    from . import registry
    from .registry import resolve_target

    spec, plugin_id = registry.tool(tool)
    if isinstance(data, ActivationSet):
        acts = data if labels is None else ActivationSet(data.layers, labels, data.concepts, data.meta)
    elif _is_module(data):
        if inputs is None:
            raise ValueError(f"analyze({tool!r}, model) needs inputs=: the model is run on them to record activations")
        acts = activations(data, inputs, layers=layers, labels=labels)
    else:
        acts = ActivationSet.from_arrays(data, labels)
    fn = resolve_target(spec.function, plugin_id)
    kwargs = dict(options)
    if out_dir is not None:
        kwargs["out_dir"] = out_dir
    try:
        result = fn(acts, **kwargs)
    except (ValueError, TypeError, KeyError) as exc:
        if isinstance(exc, TypeError) and "unexpected keyword argument" in str(exc):
            raise ZooError(f"tool {tool} takes no such option ({exc}); `zoo info {tool}` says what it takes") from None
        raise  # the tool says what its input lacks
    except ZooError:
        raise
    except Exception as exc:  # noqa: BLE001 - a tool's own failure, named with its plugin
        raise ZooError(f"tool {tool} (plugin {plugin_id}) failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(result, Mapping):
        raise ZooError(f"tool {tool} (plugin {plugin_id}) returned a {type(result).__name__}; a tool returns a dict")
    out = _plain(result, f"tool {tool}'s result")
    for k, v in list(out.items()):
        if isinstance(v, float) and math.isnan(v):
            out[k] = None  # JSON has no NaN; None says "not measured"
    return out


def _is_module(obj: Any) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - zoo-core needs torch for models anyway
        return False
    return isinstance(obj, torch.nn.Module)


class _CallableModule(types.ModuleType):
    """This module, callable as ``activations``: ``zoo.activations`` is the function of that name (lazy, see
    ``zoo/__init__.py``), but Python sets the package attribute to the MODULE whenever ``zoo.activations`` is first
    imported by a ``from zoo.activations import ...`` statement; either way ``zoo.activations(model, x, ...)`` works."""

    def __call__(self, *args: Any, **kwargs: Any) -> ActivationSet:
        return activations(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
