"""The zoo Hub format: ``config.json`` + ``model.safetensors`` + ``README.md`` at a repo's root.

``config.json`` names the plugin distribution (with a version requirement), the model and its
arguments, and the sha256 of every weight file, so ``zoo.create("hf-hub:org/repo")`` can rebuild
the architecture from it alone; it never names code to import (see ``read_config``).
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .errors import NotAZooConfig, UnsafeConfig, WeightsNotFound
from .ids import is_name, is_sha256
from .weights import sha256_file

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
CARD_NAME = "README.md"
MAX_CONFIG_BYTES = 1 << 20
_ALLOWED_KEYS = {"zoo_format_version", "plugin", "model", "model_args", "task", "preprocessing", "weights",
                 "metrics", "tag", "paper"}
_REQUIREMENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*(\s*(==|>=|<=|~=|!=|>|<)\s*[0-9][0-9A-Za-z.\-+*]*)?")


def to_json_args(args: dict[str, Any]) -> dict[str, Any]:
    """Check that every model argument survives JSON; raise naming the first one that does not."""
    out = {}
    for key, value in args.items():
        try:
            encoded = json.dumps(value, allow_nan=False)  # tuples are written as lists
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"model argument {key!r}={value!r} cannot be written to config.json ({exc}); "
                f"pass a JSON value (number, string, list, dict) or make it a builder default"
            ) from exc
        decoded = json.loads(encoded)
        if decoded != _lists(value):
            raise ValueError(f"model argument {key!r}={value!r} changes when written to JSON ({decoded!r})")
        out[key] = decoded
    return out


def _lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def build_config(prov, weights_sha256: dict[str, str], metrics: dict | None = None) -> dict[str, Any]:
    dist = prov.distribution or f"zoo-{prov.plugin}"
    requirement = f"{dist}>={prov.plugin_version}" if prov.plugin_version else dist
    return {
        "zoo_format_version": FORMAT_VERSION,
        "plugin": {"id": prov.plugin, "distribution": dist, "requirement": requirement},
        "model": prov.name,
        "model_args": to_json_args(dict(prov.model_args)),
        "task": prov.task,
        "tag": prov.tag,
        "weights": {name: {"sha256": digest} for name, digest in weights_sha256.items()},
        "metrics": dict(metrics or {}),
    }


def read_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a zoo ``config.json``; refuse anything that would make zoo run code."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise UnsafeConfig(f"{path}: config.json is {size} bytes; zoo reads at most {MAX_CONFIG_BYTES}")
    with open(path, "rb") as f:
        data = f.read(MAX_CONFIG_BYTES + 1)  # a file grown since the stat is still bounded
    return parse_config(data, str(path))


def parse_config(data: bytes | bytearray, where: str) -> dict[str, Any]:
    """Validate the bytes of a zoo ``config.json`` (already read, and checked where they came from a Hub cache)."""
    path = where
    if len(data) > MAX_CONFIG_BYTES:
        raise UnsafeConfig(f"{path}: config.json is {len(data)} bytes; zoo reads at most {MAX_CONFIG_BYTES}")
    try:
        cfg = json.loads(bytes(data).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise UnsafeConfig(f"{path}: config.json is not valid JSON ({type(exc).__name__}: {exc})") from exc
    if not isinstance(cfg, dict):
        raise UnsafeConfig(f"{path}: config.json must be a JSON object")
    if "zoo_format_version" not in cfg:
        raise NotAZooConfig(f"{path}: not a zoo config (no zoo_format_version): {_who_reads(cfg)}. zoo.create rebuilds "
                            f"only what zoo.save_pretrained or zoo.push_to_hub wrote")
    if cfg["zoo_format_version"] != FORMAT_VERSION:
        raise UnsafeConfig(f"{path}: zoo_format_version {cfg['zoo_format_version']!r} is not supported "
                           f"(this zoo reads {FORMAT_VERSION}); upgrade zoo-core")
    extra = set(cfg) - _ALLOWED_KEYS
    if extra:
        raise UnsafeConfig(
            f"{path}: config.json has keys zoo does not accept: {sorted(extra)}. A config selects a model "
            f"registered by an installed plugin by name; it can never name a builder, module or function."
        )
    model = cfg.get("model")
    if not is_name(model):
        raise UnsafeConfig(f"{path}: 'model' must be a registered model name, got {model!r}")
    plugin = cfg.get("plugin")
    if not isinstance(plugin, dict) or not isinstance(plugin.get("distribution"), str):
        raise UnsafeConfig(f"{path}: 'plugin' must be an object with a 'distribution'")
    req = plugin.get("requirement", plugin["distribution"])
    if not isinstance(req, str) or not _REQUIREMENT_RE.fullmatch(req):
        raise UnsafeConfig(f"{path}: plugin requirement {req!r} is not a plain 'name>=version'")
    if not isinstance(cfg.get("model_args", {}), dict):
        raise UnsafeConfig(f"{path}: 'model_args' must be an object")
    weights = cfg.get("weights", {})
    if not isinstance(weights, dict) or not all(isinstance(v, dict) and is_sha256(v.get("sha256")) for v in weights.values()):
        raise UnsafeConfig(f"{path}: 'weights' must map file names to {{'sha256': hex digest}}")
    for name in weights:
        if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith(".") or "\0" in name:
            raise UnsafeConfig(f"{path}: weight file name {name!r} must be a plain file name")
    return cfg


def _who_reads(cfg: dict[str, Any]) -> str:
    """A hint at the library a foreign config.json belongs to (read from its keys; nothing is imported)."""
    if "architecture" in cfg and ("pretrained_cfg" in cfg or "num_classes" in cfg):
        return f"it is a timm config (architecture {cfg['architecture']!r}); load it with timm.create_model('hf-hub:ORG/REPO')"
    if "architectures" in cfg or "model_type" in cfg:
        return f"it looks like a transformers config (model_type {cfg.get('model_type')!r}); load it with transformers"
    return "it was written by another library"


def render_card(prov, cfg: dict[str, Any], paper=None, license: str = "mit", repo_id: str | None = None) -> str:
    """A model card from structured data (huggingface_hub ModelCard), never hand-built YAML."""
    from huggingface_hub import ModelCard, ModelCardData

    metrics = cfg.get("metrics") or {}
    tags = ["zoo", f"zoo-{prov.plugin}"] + ([prov.task] if prov.task else [])
    data = ModelCardData(license=license, library_name="zoo", tags=tags, model_name=prov.name)
    lines = [
        f"# {prov.name}" + (f".{prov.tag}" if prov.tag else ""),
        "",
        f"A `{prov.name}` model from the zoo plugin `{cfg['plugin']['distribution']}`"
        + (f", task `{prov.task}`." if prov.task else "."),
        "",
    ]
    if paper is not None:
        ref = paper.url or (f"https://arxiv.org/abs/{paper.arxiv}" if paper.arxiv else "")
        lines += [f"**Paper:** {paper.title}" + (f" ({paper.year})" if paper.year else "") + (f" {ref}" if ref else ""), ""]
    lines += ["## Load with zoo", "", "```python", "import zoo",
              f"# pip install '{cfg['plugin']['requirement']}'",
              f"model = zoo.create(\"hf-hub:{repo_id or 'ORG/REPO'}\", pretrained=True)",
              "```", "", "## Metrics measured by zoo", ""]
    if metrics:
        lines += ["| metric | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in metrics.items()]
    else:
        lines += ["None recorded: these weights were saved without an evaluation."]
    lines += ["", "## Configuration", "", "```json", json.dumps(cfg["model_args"], indent=2, sort_keys=True), "```", ""]
    content = f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines)
    return str(ModelCard(content))


def write_folder(directory: str | os.PathLike, files: dict[str, bytes | Path], *, keep: tuple[str, ...] = (),
                 move: tuple[str, ...] = ()) -> Path:
    """Write ``files`` into ``directory`` all at once: a temp folder is filled, then swapped in.

    Files named in ``keep`` that already exist in ``directory`` are carried over untouched; ``Path``
    contents named in ``move`` are the caller's temporary files, moved rather than copied.
    """
    directory = Path(directory).resolve()
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.tmp-"))
    try:
        for name, content in files.items():
            if isinstance(content, Path):
                (shutil.move if name in move else shutil.copyfile)(content, tmp / name)
            else:
                (tmp / name).write_bytes(content)
        if directory.exists():
            for name in keep:
                if (directory / name).exists():
                    shutil.copyfile(directory / name, tmp / name)
            old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
            os.replace(directory, old)
            os.replace(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def local_files(directory: str | os.PathLike) -> tuple[dict[str, Any], Path]:
    """The validated config and weights path of a saved zoo folder (``local-dir:``)."""
    directory = Path(directory)
    if "\0" in str(directory):
        raise WeightsNotFound("local-dir path contains a NUL byte")
    cfg_path = directory / CONFIG_NAME
    try:
        is_dir, has_cfg = directory.is_dir(), cfg_path.is_file()
    except OSError as exc:  # a name too long for the file system, ...
        raise WeightsNotFound(f"local-dir:{str(directory)[:200]}: {exc.strerror or exc}") from exc
    if not is_dir:
        raise WeightsNotFound(f"local-dir:{directory} is not a folder")
    if not has_cfg:
        raise WeightsNotFound(f"local-dir:{directory} has no {CONFIG_NAME}; save one with zoo.save_pretrained")
    cfg = read_config(cfg_path)
    return cfg, directory


def manifest(files: dict[str, Path]) -> dict[str, str]:
    return {name: sha256_file(p) for name, p in files.items()}
