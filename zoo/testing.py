"""The conformance kit every plugin's tests call.

    from zoo.testing import check_plugin

    def test_conformance():
        check_plugin("mrl")

For each model of the plugin it checks: ``plugin.py`` imports no torch; the model builds and its
provenance claims no weights; the task's forward contract on the task's example input; the
arguments survive JSON; seeded construction is deterministic; ``save_pretrained`` +
``create("local-dir:...")`` and, when a hub is reachable (``HF_ENDPOINT``), ``push_to_hub`` +
``create("hf-hub:...")`` give bit-identical outputs with strict loading.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from typing import Any

from . import registry
from .factory import create, push_to_hub, resolve_target, save_pretrained
from .hubformat import to_json_args

__all__ = ["check_plugin", "check_model", "check_no_torch_import", "example_input"]


def check_no_torch_import(module: str) -> None:
    """Import ``module`` in a fresh interpreter and fail if that imports torch."""
    code = f"import sys, importlib; importlib.import_module({module!r}); " \
           "bad = [m for m in ('torch', 'numpy', 'timm') if m in sys.modules]; " \
           "assert not bad, 'imports ' + ', '.join(bad)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"{module} must not import heavy modules (listing stays fast): {proc.stderr[-800:]}")


def example_input(task_name: str | None) -> Any:
    """The task's example input, or None when the task declares none."""
    if task_name is None:
        return None
    spec = registry.task(task_name)
    return resolve_target(spec.example_input)() if spec.example_input else None


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
    import torch

    fa, fb = _flatten(a), _flatten(b)
    assert len(fa) == len(fb) and fa, f"{what}: outputs differ in structure"
    for x, y in zip(fa, fb, strict=True):
        assert x.shape == y.shape and torch.equal(x, y), f"{what}: outputs are not bit-identical"


def check_model(name: str, *, overrides: dict[str, Any] | None = None, hub: bool | None = None) -> None:
    """Run every conformance check on one model (see the module docstring)."""
    import torch

    overrides = overrides or {}
    torch.manual_seed(0)
    model = create(name, **overrides).eval()
    prov = model.zoo
    assert prov.pretrained is False and prov.commit is None and prov.sha256 is None, \
        f"{name}: a freshly built model must not claim weights: {prov}"
    to_json_args(dict(prov.model_args))

    x = example_input(prov.task)
    if x is None:
        return
    out = _run(model, x)
    spec = registry.task(prov.task)
    if spec.check_output:
        resolve_target(spec.check_output)(model, out)

    torch.manual_seed(0)
    again = create(name, **overrides).eval()
    assert_same_outputs(out, _run(again, x), f"{name}: seeded construction")

    with tempfile.TemporaryDirectory() as tmp:
        folder = save_pretrained(model, os.path.join(tmp, "saved"))
        loaded = create(f"local-dir:{folder}", pretrained=True).eval()
        assert loaded.zoo.pretrained and loaded.zoo.sha256, f"{name}: local-dir load lost provenance"
        assert_same_outputs(out, _run(loaded, x), f"{name}: save_pretrained -> local-dir: round trip")

    if hub is None:
        hub = bool(os.environ.get("HF_ENDPOINT"))
    if hub:
        repo = f"zoo-conformance/{name.replace('_', '-')}-{uuid.uuid4().hex[:8]}"
        commit = push_to_hub(model, repo)
        pulled = create(f"hf-hub:{repo}@{commit}", pretrained=True).eval()
        assert pulled.zoo.commit == commit, f"{name}: hub load is not pinned to the pushed commit"
        assert_same_outputs(out, _run(pulled, x), f"{name}: push_to_hub -> hf-hub: round trip")


def check_plugin(plugin_id: str, *, overrides: dict[str, dict[str, Any]] | None = None, hub: bool | None = None) -> None:
    """Check that the plugin loaded cleanly and run ``check_model`` on each of its models.

    ``overrides`` maps a model name to small builder arguments, to keep the checks fast.
    """
    status = next((s for s in registry.plugins() if s.id == plugin_id), None)
    assert status is not None, f"plugin {plugin_id} is not installed (pip install ./plugins/{plugin_id})"
    assert status.state == "ok", f"plugin {plugin_id} is {status.state}: {status.error}"
    assert status.models or status.tasks, f"plugin {plugin_id} registers nothing"
    check_no_torch_import(status.module)
    claim = registry.catalog().claims.get(plugin_id)
    if claim is not None:
        resolve_target(claim.reproduce)  # the reproduce entry point must import
    for name in status.models:
        check_model(name, overrides=(overrides or {}).get(name), hub=hub)
