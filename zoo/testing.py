"""The conformance kit every plugin's tests call.

    from zoo.testing import check_plugin

    def test_conformance():
        check_plugin("mrl")

Run under pytest with zoo's plugin (``pip install zoo-core[test]``: a local hub and hermetic Hub settings,
see ``zoo.pytest_plugin``). For each model of the plugin it checks, every model alike:

* ``plugin.py`` imports no torch (nor numpy, timm), and the claim's reproduce entry point imports;
* the model builds as a ``torch.nn.Module`` whose provenance claims no weights, and its arguments survive JSON;
* seeded construction is deterministic (bit-identical state);
* ``save_pretrained`` writes a config.json that names the model and its arguments and rebuilds the same
  architecture, and ``create("local-dir:...", pretrained=True)`` loads the weights back strictly, bit-identical;
* ``push_to_hub`` + ``create("hf-hub:...@commit", pretrained=True)`` through the local hub, pinned to the
  pushed commit, bit-identical;
* for a model with a task: the task's forward contract on its example input, and identical outputs from
  the seeded twin and from each reloaded copy.

A failed check raises ``ConformanceError`` (an ``AssertionError``, so pytest reports a failure) whose message
names the model and the check. The kit uses no ``assert`` statement: it checks the same under ``python -O``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from typing import Any

from . import registry
from .factory import create, push_to_hub, resolve_target, save_pretrained
from .hubformat import CONFIG_NAME, to_json_args

__all__ = ["ConformanceError", "check_plugin", "check_model", "check_no_torch_import", "example_input",
           "assert_same_outputs", "assert_same_state"]

_HEAVY = ("torch", "numpy", "timm")


class ConformanceError(AssertionError):
    """A plugin or model fails a conformance check; the message says which model and which check."""


def _require(ok: object, message: str) -> None:
    if not ok:
        raise ConformanceError(message)


def check_no_torch_import(module: str) -> None:
    """Import ``module`` in a fresh interpreter and fail if that imports torch, numpy or timm."""
    code = ("import importlib, sys; importlib.import_module(sys.argv[1]); "
            f"bad = [m for m in {_HEAVY!r} if m in sys.modules]; "
            "sys.exit('imports ' + ', '.join(bad) if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, timeout=120)
    _require(proc.returncode == 0,
             f"{module} must not import heavy modules (listing stays fast): {proc.stderr.strip()[-800:]}")


def example_input(task_name: str | None, model: Any = None) -> Any:
    """The task's example input, or None when the model has no task or the task declares none.

    A task whose models take different inputs (grid or point-set operators) declares ``example_input(model=None)``
    and is given the model, to return the input that model's kind takes."""
    if task_name is None:
        return None
    spec = registry.task(task_name)
    if not spec.example_input:
        return None
    fn = resolve_target(spec.example_input)
    import inspect

    try:
        takes_model = "model" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no model argument
        takes_model = False
    return fn(model=model) if takes_model else fn()


def _run(model, x):
    import torch

    with torch.no_grad():
        return model(*x) if isinstance(x, tuple) else model(x)


def _flatten(out) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for k in sorted(out, key=str) for t in _flatten(out[k])]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    return []


def assert_same_outputs(a, b, what: str) -> None:
    """Fail unless two forward outputs hold the same tensors, bit for bit, in the same structure."""
    import torch

    fa, fb = _flatten(a), _flatten(b)
    _require(fa and len(fa) == len(fb), f"{what}: outputs differ in structure ({len(fa)} vs {len(fb)} tensors)")
    for i, (x, y) in enumerate(zip(fa, fb, strict=True)):
        _require(x.shape == y.shape and x.dtype == y.dtype and torch.equal(x, y),
                 f"{what}: output tensor {i} is not bit-identical")


def _state(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def assert_same_state(expected: dict, model, what: str) -> None:
    """Fail unless ``model``'s state dict equals ``expected`` (same keys, shapes, dtypes, values bit for bit)."""
    import torch

    got = model.state_dict()
    missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    _require(not missing and not extra, f"{what}: state dict keys differ: missing {missing[:10]}, unexpected {extra[:10]}")
    for key, value in expected.items():
        other = got[key]
        _require(tuple(other.shape) == tuple(value.shape) and other.dtype == value.dtype,
                 f"{what}: {key} is {other.dtype} {tuple(other.shape)}, expected {value.dtype} {tuple(value.shape)}")
        _require(torch.equal(other.detach().cpu(), value.cpu()), f"{what}: {key} is not bit-identical")


def _step(what: str, fn, *args, **kwargs):
    """Run one step of a check; any error becomes a ConformanceError that names the step."""
    try:
        return fn(*args, **kwargs)
    except ConformanceError:
        raise
    except Exception as exc:  # noqa: BLE001 - the model's code may raise anything: report it with its step
        raise ConformanceError(f"{what} failed: {type(exc).__name__}: {exc}") from exc


def _build(name: str, overrides: dict[str, Any]):
    import torch

    torch.manual_seed(0)
    model = _step(f"{name}: create({name!r}, **{overrides!r})", create, name, **overrides)
    _require(isinstance(model, torch.nn.Module), f"{name}: the builder returned a {type(model).__name__}, "
                                                 "not a torch.nn.Module")
    return model.eval()


def _check_config(name: str, folder, prov, state: dict) -> None:
    """config.json names the model and its arguments, and rebuilds the same architecture without weights."""
    with open(os.path.join(folder, CONFIG_NAME), encoding="utf-8") as f:
        cfg = _step(f"{name}: reading the saved {CONFIG_NAME}", json.load, f)
    _require(isinstance(cfg, dict) and cfg.get("model") == name,
             f"{name}: the saved {CONFIG_NAME} names model {cfg.get('model') if isinstance(cfg, dict) else cfg!r}")
    _require(cfg.get("model_args", {}) == to_json_args(dict(prov.model_args)),
             f"{name}: the saved {CONFIG_NAME} holds model_args {cfg.get('model_args')!r}, "
             f"not the model's {dict(prov.model_args)!r}")
    rebuilt = _step(f"{name}: create('local-dir:...') from {CONFIG_NAME} alone", create, f"local-dir:{folder}")
    shapes = {k: tuple(v.shape) for k, v in rebuilt.state_dict().items()}
    _require(shapes == {k: tuple(v.shape) for k, v in state.items()},
             f"{name}: the architecture rebuilt from {CONFIG_NAME} differs from the model's (state dict keys or shapes)")


def _use_hub(hub: bool | None) -> bool:
    """Whether to push and pull; with ``hub=None``, only through a local hub, and never silently skipped."""
    if hub is not None:
        return hub
    endpoint = os.environ.get("HF_ENDPOINT", "")
    from urllib.parse import urlsplit

    host = urlsplit(endpoint).hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        return True
    where = f"HF_ENDPOINT is {endpoint}, not a local hub" if endpoint else "HF_ENDPOINT is not set"
    raise ConformanceError(
        f"the push/pull round trip needs a local hub, and {where}: run the checks under pytest with zoo's plugin "
        "(pip install 'zoo-core[test]'; it starts one in a zoo plugin's folder, or with `pytest --zoo-hub`), "
        "or point HF_ENDPOINT at one (`zoo hub serve`); hub=False skips the round trip, hub=True pushes to "
        "HF_ENDPOINT whatever it is")


def check_model(name: str, *, overrides: dict[str, Any] | None = None, hub: bool | None = None,
                device: Any = None) -> None:
    """Run every conformance check on one model (see the module docstring).

    Args:
        name: the model's registered name.
        overrides: small builder arguments, to keep the checks fast.
        hub: push and pull through ``HF_ENDPOINT``; None: when it is a local hub (else fail with a hint),
            False: skip the round trip.
        device: also check the model on this device (``"cuda"``; default ``$ZOO_TEST_DEVICE``, which ``pytest
            --zoo-device`` sets): ``create(device=)`` gives the CPU build's
            weights there, its forward on the example input (moved there) keeps the task's contract and agrees
            with the CPU forward to float tolerance, and ``save_pretrained`` from the device writes the same state.
    """
    overrides = dict(overrides or {})
    if device is None:  # `pytest --zoo-device cuda` runs every plugin's own conformance test on a GPU too
        device = os.environ.get("ZOO_TEST_DEVICE") or None
    use_hub = _use_hub(hub)
    model = _build(name, overrides)
    prov = model.zoo
    _require(prov.pretrained is False and prov.commit is None and prov.sha256 is None,
             f"{name}: a freshly built model must not claim weights: {prov}")
    _step(f"{name}: writing the model arguments to JSON", to_json_args, dict(prov.model_args))
    state = _state(model)

    again = _build(name, overrides)
    assert_same_state(state, again, f"{name}: seeded construction (torch.manual_seed(0) twice)")

    copies = {"seeded construction": again}
    with tempfile.TemporaryDirectory() as tmp:
        folder = _step(f"{name}: save_pretrained", save_pretrained, model, os.path.join(tmp, "saved"))
        _check_config(name, folder, prov, state)
        loaded = _step(f"{name}: create('local-dir:...', pretrained=True) (strict load)",
                       create, f"local-dir:{folder}", pretrained=True).eval()
    _require(loaded.zoo.pretrained and loaded.zoo.sha256, f"{name}: the local-dir: load lost its provenance")
    assert_same_state(state, loaded, f"{name}: save_pretrained -> local-dir: round trip")
    copies["save_pretrained -> local-dir: round trip"] = loaded

    if use_hub:
        repo = f"zoo-conformance/{name.replace('_', '-')}-{uuid.uuid4().hex[:8]}"
        commit = _step(f"{name}: push_to_hub to {os.environ.get('HF_ENDPOINT')}", push_to_hub, model, repo)
        pulled = _step(f"{name}: create('hf-hub:{repo}@{commit}', pretrained=True) (strict load)",
                       create, f"hf-hub:{repo}@{commit}", pretrained=True).eval()
        _require(pulled.zoo.commit == commit, f"{name}: the hub load is pinned to {pulled.zoo.commit}, not the pushed "
                                              f"commit {commit}")
        assert_same_state(state, pulled, f"{name}: push_to_hub -> hf-hub: round trip")
        copies["push_to_hub -> hf-hub: round trip"] = pulled

    # the task's forward contract, last: every copy above was compared before any forward pass could touch it
    x = _step(f"{name}: the example input of task {prov.task!r}", example_input, prov.task, model)
    if x is not None:
        out = _step(f"{name}: forward on the example input of task {prov.task}", _run, model, x)
        spec = registry.task(prov.task)
        if spec.check_output:
            _step(f"{name}: the forward contract of task {prov.task}", resolve_target(spec.check_output), model, out)
        for what, copy in copies.items():
            assert_same_outputs(out, _step(f"{name}: forward of the {what}", _run, copy, x), f"{name}: {what}")
    if device is not None:
        _check_device(name, overrides, state, x, out if x is not None else None, device)


def _to(x: Any, device: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, tuple):
        return tuple(_to(v, device) for v in x)
    return x


def _check_device(name: str, overrides: dict[str, Any], state: dict, x: Any, out: Any, device: Any) -> None:
    """The model on ``device``: the same seeded weights, the task's contract, the CPU's outputs to float tolerance."""
    import torch

    torch.manual_seed(0)
    model = _step(f"{name}: create({name!r}, device={device!r})", create, name, device=device, **overrides).eval()
    where = {t.device.type for t in [*model.parameters(), *model.buffers()]}
    want = torch.device(device).type
    _require(where <= {want}, f"{name}: create(device={device!r}) left tensors on {sorted(where - {want})}")
    assert_same_state(state, model, f"{name}: create(device={device!r}) (seeded, compared on the CPU)")
    if x is not None:
        got = _step(f"{name}: forward on {device} (example input moved there)", _run, model, _to(x, device))
        spec = registry.task(model.zoo.task)
        if spec.check_output:
            _step(f"{name}: the forward contract of task {model.zoo.task} on {device}",
                  resolve_target(spec.check_output), model, got)
        fa, fb = _flatten(out), _flatten(got)
        _require(len(fa) == len(fb), f"{name}: outputs on {device} differ in structure from the CPU's")
        for i, (a, b) in enumerate(zip(fa, fb, strict=True)):
            _require(b.device.type == want, f"{name}: output tensor {i} came back on {b.device}, not {device}")
            if a.is_floating_point():
                # kernels differ between devices (TF32 off, but reduction orders are not the CPU's)
                _require(torch.allclose(a.float(), b.float().cpu(), rtol=1e-3, atol=1e-4),
                         f"{name}: output tensor {i} on {device} differs from the CPU's by "
                         f"{float((a.float() - b.float().cpu()).abs().max()):.3g}")
            else:
                _require(torch.equal(a, b.cpu()), f"{name}: output tensor {i} on {device} differs from the CPU's")
    with tempfile.TemporaryDirectory() as tmp:
        folder = _step(f"{name}: save_pretrained from {device}", save_pretrained, model, os.path.join(tmp, "saved"))
        loaded = _step(f"{name}: create('local-dir:...', pretrained=True) of the {device} save", create,
                       f"local-dir:{folder}", pretrained=True)
    assert_same_state(state, loaded, f"{name}: save_pretrained on {device} -> local-dir: round trip")


def check_plugin(plugin_id: str, *, overrides: dict[str, dict[str, Any]] | None = None, hub: bool | None = None,
                 device: Any = None) -> None:
    """Check that the plugin loaded cleanly and run ``check_model`` on each of its models.

    ``overrides`` maps a model name to small builder arguments, to keep the checks fast; ``hub`` is passed
    to ``check_model``.
    """
    status = next((s for s in registry.plugins() if s.id == plugin_id), None)
    _require(status is not None, f"plugin {plugin_id} is not installed (pip install it; `zoo plugins` lists the "
                                 "installed ones)")
    _require(status.state == "ok", f"plugin {plugin_id} is {status.state}: {status.error}")
    _require(status.models or status.tasks or status.tools, f"plugin {plugin_id} registers nothing")
    unknown = sorted(set(overrides or {}) - set(status.models))
    _require(not unknown, f"overrides name models that plugin {plugin_id} does not register: {unknown}")
    check_no_torch_import(status.module.split(":", 1)[0].split("[", 1)[0].strip())
    claim = registry.catalog().claims.get(plugin_id)
    if claim is not None and claim.not_measured is None:
        _step(f"plugin {plugin_id}: importing its reproduce entry point {claim.reproduce}", resolve_target, claim.reproduce)
    for name in status.tools:  # a tool's function must import and be callable (its statistics are the plugin's tests)
        spec, _ = registry.tool(name)
        fn = _step(f"tool {name}: importing {spec.function}", resolve_target, spec.function)
        _require(callable(fn), f"tool {name}: {spec.function} is not callable")
    for name in status.models:
        check_model(name, overrides=(overrides or {}).get(name), hub=hub, device=device)
