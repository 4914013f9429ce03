"""create(), save_pretrained() and push_to_hub(): from a name to a module with honest provenance."""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import logging
import numbers
import os
import sys
import tempfile
import threading
import types
import typing
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import hubformat, registry, weights
from .errors import (
    NotAZooModel,
    PluginNotInstalled,
    PushFailed,
    UnknownArgument,
    UnsafeConfig,
    WeightsCorrupt,
    WeightsNotFound,
)
from .registry import resolve_target  # noqa: F401 - also zoo.factory.resolve_target, as before
from .specs import ModelSpec

log = logging.getLogger(__name__)

__all__ = ["Provenance", "create", "save_pretrained", "push_to_hub", "publish", "resolve_target"]


@dataclass(frozen=True)
class Provenance:
    """What a model is and where its weights came from; attached as ``model.zoo``.

    ``pretrained`` is True only when weights were loaded; ``repo``, ``commit`` and ``sha256`` are
    then the exact source, and None otherwise.
    """

    name: str
    plugin: str
    plugin_version: str | None
    distribution: str | None
    model_args: Mapping[str, Any] = field(default_factory=dict)
    task: str | None = None
    tag: str | None = None
    pretrained: bool = False
    repo: str | None = None
    revision: str | None = None
    commit: str | None = None
    sha256: str | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)  # the last zoo.evaluate on it (task + metrics)
    source: str | None = None  # "registry" (a tag, from the Hub), "package" (a tag's shipped snapshot), "hf-hub", "local-dir"

    @property
    def id(self) -> str:
        return f"{self.name}.{self.tag}" if self.tag and self.pretrained else self.name


def _check_kwargs(spec: ModelSpec, builder, kwargs: dict[str, Any], where: str) -> None:
    """Raise ``UnknownArgument`` for a name the builder does not take, or a plain value of the wrong type."""
    params = inspect.signature(builder).parameters
    valid = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(kwargs) - set(valid))
    if unknown and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise UnknownArgument(f"{spec.name}: unknown argument(s) {unknown} {where}; valid arguments: {', '.join(valid)}")
    namespace = None
    for name in set(kwargs) & set(valid):
        value, param = kwargs[name], params[name]
        if value is not None and not isinstance(value, (bool, numbers.Real, str)):
            continue  # objects, lists, callables: the builder's own business
        if namespace is None:
            namespace = _namespace(builder)
        expected = _expected(param, namespace)
        if expected is not None and not _fits(value, param.default, *expected):
            raise UnknownArgument(f"{spec.name}: argument {name}={value!r} {where} must be {_describe(*expected)}, "
                                  f"got {type(value).__name__}")


# Builder arguments are checked only against annotations made of these (and Literal values): a command-line
# `--set depth=two` then fails naming `depth` and `int`, instead of deep inside torch.
_PLAIN = {bool: "bool", int: "int", float: "float", str: "str", type(None): "None"}


def _namespace(builder) -> dict[str, Any]:
    """The globals a builder's string annotations (``from __future__ import annotations``) refer to."""
    fn = builder.__init__ if isinstance(builder, type) else builder
    found = getattr(inspect.unwrap(fn), "__globals__", None)
    if found is None:
        module = sys.modules.get(getattr(builder, "__module__", None) or "")
        found = vars(module) if module is not None else {}
    return found


def _expected(param: inspect.Parameter, namespace: dict[str, Any]) -> tuple[set[type], tuple] | None:
    """(plain types, literal values) a parameter accepts, or None when that cannot be told simply.

    Without an annotation, a number or bool default means a string is wrong (what ``--set key=word`` gives).
    """
    ann = param.annotation
    if ann is param.empty:
        default = param.default
        if isinstance(default, (bool, numbers.Real)):
            return ({bool, int} if isinstance(default, bool) else {int, float}), ()
        return None
    if isinstance(ann, str):
        try:
            ann = eval(ann, namespace)  # noqa: S307 - the plugin's own annotation, in its own module
        except Exception:  # noqa: BLE001 - e.g. a name imported only for type checkers: no check
            return None
    return _plain(ann)


def _plain(ann: Any) -> tuple[set[type], tuple] | None:
    if ann is None:
        return {type(None)}, ()
    if ann in _PLAIN:
        return {ann}, ()
    origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return set(), typing.get_args(ann)
    if origin in (typing.Union, types.UnionType):
        kinds: set[type] = set()
        values: tuple = ()
        for arg in typing.get_args(ann):
            part = _plain(arg)
            if part is None:
                return None
            kinds |= part[0]
            values += part[1]
        return kinds, values
    return None


def _fits(value: Any, default: Any, kinds: set[type], values: tuple) -> bool:
    if any(type(value) is type(v) and value == v for v in values):
        return True
    if value is None:
        return type(None) in kinds or default is None  # `x: int = None` means "int or None"
    if isinstance(value, bool):  # a bool is an int (PEP 484), but 1 is not a bool
        return bool(kinds & {bool, int, float})
    if isinstance(value, numbers.Integral):
        return bool(kinds & {int, float})
    if isinstance(value, numbers.Real):
        return float in kinds
    return str in kinds


def _describe(kinds: set[type], values: tuple) -> str:
    names = [_PLAIN[k] for k in (bool, int, float, str, type(None)) if k in kinds]
    if values:
        names.append("one of " + ", ".join(repr(v) for v in values))
    return " or ".join(names)


DEFAULT_MAX_PARAMS = 2_000_000_000
# Building costs time per module, even on the meta device (~0.2 ms each on a loaded core): `depth=200000`
# is refused after this many instead of building for minutes. The largest published models have a few thousand.
DEFAULT_MAX_MODULES = 20_000


def _limit(var: str, default: int) -> int:
    raw = os.environ.get(var)
    if raw:
        try:
            value = int(float(raw))
            if value > 0:
                return value
        except (ValueError, OverflowError):
            pass
        log.warning("ignoring %s=%r: not a positive number", var, raw)
    return default


def max_params() -> int:
    """The most parameter and buffer elements a config.json may ask for: ``ZOO_MAX_PARAMS``, else 2e9."""
    return _limit("ZOO_MAX_PARAMS", DEFAULT_MAX_PARAMS)


def max_modules() -> int:
    """The most submodules a config.json may ask for: ``ZOO_MAX_MODULES``, else 20,000."""
    return _limit("ZOO_MAX_MODULES", DEFAULT_MAX_MODULES)


class _OverBudget(BaseException):
    """Raised from a registration hook: a BaseException, so that a builder's `except Exception` cannot swallow it."""


_budget = threading.local()


def _count(module, name, tensor):
    """Global parameter/buffer registration hook: charge the building thread's budget, if it has one."""
    left = getattr(_budget, "left", None)
    if left is not None and tensor is not None:
        _budget.left = left - tensor.numel()
        _budget.seen += tensor.numel()
        if _budget.left < 0:
            raise _OverBudget("params")


def _count_module(module, name, submodule):
    """Global submodule registration hook: charge the building thread's module budget, if it has one."""
    left = getattr(_budget, "modules", None)
    if left is not None:
        _budget.modules = left - 1
        if left <= 0:
            raise _OverBudget("modules")


_hooks_lock = threading.Lock()
_hooks_installed = False


def _install_hooks() -> None:
    """Install the counting hooks once per process: they charge only a thread with a budget, so concurrent
    builds never count each other's tensors (hooks added and removed per build would fire once per build)."""
    global _hooks_installed
    with _hooks_lock:
        if _hooks_installed:
            return
        from torch.nn.modules import module as torch_module

        torch_module.register_module_parameter_registration_hook(_count)
        torch_module.register_module_buffer_registration_hook(_count)
        torch_module.register_module_module_registration_hook(_count_module)
        _hooks_installed = True


def _bounded_call(builder, kwargs: dict[str, Any], limit: int, *, meta: bool):
    """``builder(**kwargs)`` (on the meta device if ``meta``), aborted once it registers more than ``limit`` elements.

    Returns (model, elements registered); raises ``_OverBudget`` past the limit.
    """
    import torch

    _install_hooks()
    _budget.left, _budget.seen, _budget.modules = limit, 0, max_modules()
    try:
        if meta:
            with torch.device("meta"):
                model = builder(**kwargs)
        else:
            model = builder(**kwargs)
        if _budget.left < 0 or _budget.modules < 0:  # a builder that caught our exception anyway
            raise _OverBudget("params" if _budget.left < 0 else "modules")
        seen = _budget.seen
    finally:
        _budget.left = _budget.modules = None
    counted = sum(t.numel() for t in (*model.parameters(), *model.buffers())) if hasattr(model, "parameters") else 0
    if counted > limit:
        raise _OverBudget("params")
    return model, max(seen, counted)


_BUILD_ERRORS = (TypeError, ValueError, ZeroDivisionError, ArithmeticError, RuntimeError, AssertionError, IndexError,
                 KeyError, AttributeError)


def _culprits(builder, spec: ModelSpec, kwargs: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """The config arguments whose value alone makes the build fail: each is set back to its default, on meta."""
    defaults = {n: p.default for n, p in inspect.signature(builder).parameters.items() if p.default is not p.empty}
    defaults.update(spec.defaults)
    found = []
    for name in list(args)[:16]:
        if name not in defaults or defaults[name] == kwargs[name]:
            continue
        try:
            _bounded_call(builder, {**kwargs, name: defaults[name]}, max_params(), meta=True)
        except _OverBudget:
            continue
        except Exception:  # noqa: BLE001 - still failing without this one: not (only) its fault
            continue
        found.append(name)
    return found


def _build_untrusted(spec: ModelSpec, builder, kwargs: dict[str, Any], args: dict[str, Any], where: str):
    """Build from a config.json's arguments: sized on the meta device first, builder errors named."""
    limit = max_params()

    def text(names) -> str:
        return ", ".join(f"{n}={kwargs[n]!r}" for n in names)

    def too_big(exc: _OverBudget):
        what, var = ((f"{limit:,} parameter and buffer elements", "ZOO_MAX_PARAMS") if exc.args[0] == "params"
                     else (f"{max_modules():,} modules", "ZOO_MAX_MODULES"))
        return UnsafeConfig(f"{spec.name}: model_args {where} ({text(args)}) build a model of more than {what}, "
                            f"above the limit ({var}); it was stopped before allocating it. Raise {var} if you "
                            f"trust this config.")

    def failed(exc: BaseException):
        names = _culprits(builder, spec, kwargs, args) or list(args)
        return UnknownArgument(f"{spec.name}: argument {text(names)} {where} is not one the builder accepts: "
                               f"{type(exc).__name__}: {exc}")

    try:
        _bounded_call(builder, kwargs, limit, meta=True)
    except _OverBudget as exc:
        raise too_big(exc) from None
    except Exception as meta_exc:  # noqa: BLE001 - some builders cannot run on meta: build for real, still counted
        log.debug("%s cannot be built on the meta device (%s); building it with the count on", spec.name, meta_exc)
        try:
            model, _ = _bounded_call(builder, kwargs, limit, meta=False)
        except _OverBudget as exc:
            raise too_big(exc) from None
        except _BUILD_ERRORS as exc:
            raise failed(exc) from exc
        return model
    try:
        return builder(**kwargs)
    except _BUILD_ERRORS as exc:
        raise failed(exc) from exc


def _build(spec: ModelSpec, plugin_id: str, args: dict[str, Any], overrides: dict[str, Any], where: str):
    """Build ``spec`` with ``args`` from a config.json (untrusted: bounded, errors named) and the caller's ``overrides``."""
    builder = resolve_target(spec.builder, plugin_id)
    _check_kwargs(spec, builder, args, where)
    _check_kwargs(spec, builder, overrides, "passed to create()")
    kwargs = {**spec.defaults, **args, **overrides}
    untrusted = {k: v for k, v in args.items() if k not in overrides}
    if untrusted:
        model = _build_untrusted(spec, builder, kwargs, untrusted, where)
    else:
        model = builder(**kwargs)  # the caller's own arguments: a builder error reaches them whole
    status = registry.catalog().statuses[plugin_id]
    model.zoo = Provenance(name=spec.name, plugin=plugin_id, plugin_version=status.version,
                           distribution=status.dist, model_args=dict(kwargs), task=spec.task)
    return model


class _SkipInit:
    """While active on a thread, ``torch.nn.init``'s public in-place initialisers do nothing there and record the
    tensors they were given: a model about to receive pretrained weights is built without drawing random values
    the load overwrites (for a ResNet-50 the build drops from ~270 ms to ~15 ms; transformers' ``no_init_weights``
    does the same). Other threads, and this one outside the block, run the real initialisers; the wrappers stay
    installed only while some thread is inside a block.
    """

    _lock = threading.Lock()
    _users = 0
    _originals: dict[str, Any] = {}
    _local = threading.local()

    @classmethod
    def _wrap(cls, name: str, real):
        def init(tensor, *args, **kwargs):
            skipped = getattr(cls._local, "skipped", None)
            if skipped is None:
                return real(tensor, *args, **kwargs)
            skipped.append(tensor)
            return tensor

        init.__wrapped__ = real
        init.__name__ = init.__qualname__ = name
        return init

    @classmethod
    @contextlib.contextmanager
    def active(cls):
        """Yield the list of tensors whose initialisation was skipped inside the block."""
        import torch.nn.init as tinit

        with cls._lock:
            if cls._users == 0:
                cls._originals = {n: f for n in dir(tinit) if n.endswith("_") and not n.startswith("_")
                                  and callable(f := getattr(tinit, n))}
                for n, f in cls._originals.items():
                    setattr(tinit, n, cls._wrap(n, f))
            cls._users += 1
        skipped: list = []
        cls._local.skipped = skipped
        try:
            yield skipped
        finally:
            cls._local.skipped = None
            with cls._lock:
                cls._users -= 1
                if cls._users == 0:
                    for n, f in cls._originals.items():
                        setattr(tinit, n, f)


def _build_for_weights(spec: ModelSpec, plugin_id: str, args: dict[str, Any], overrides: dict[str, Any], where: str):
    """``_build`` for a model whose every parameter and persistent buffer a strict load is about to overwrite.

    The random initialisation is skipped (``_SkipInit``) when that is safe: every tensor an initialiser was
    skipped on must be the whole storage of a parameter or persistent buffer (which the strict load then fills),
    and the model must keep no tensor the load does not fill (a non-persistent buffer, a tensor attribute) that
    the builder could have derived from the values it drew. Otherwise, and when the builder fails on values it
    did not draw (an SVD of uninitialised memory), the build is redone with the real initialisers, so nothing
    the weights do not cover is left unset or derived from garbage.
    """
    try:
        import torch  # noqa: F401 - the builders need it anyway; without it there is nothing to skip
    except ImportError:
        return _build(spec, plugin_id, args, overrides, where)
    try:
        with _SkipInit.active() as skipped:
            model = _build(spec, plugin_id, args, overrides, where)
    except Exception as exc:  # noqa: BLE001 - built again with its init: a real builder error is raised from there
        log.debug("%s failed to build without its init (%s: %s); building it with its init", spec.name,
                  type(exc).__name__, exc)
        return _build(spec, plugin_id, args, overrides, where)
    if skipped and _keeps_unloaded_tensors(model):
        log.debug("%s keeps tensors outside its state dict; building it again with its init", spec.name)
        return _build(spec, plugin_id, args, overrides, where)
    if skipped:
        state = getattr(model, "state_dict", None)
        whole = {t.untyped_storage().data_ptr() for t in (state().values() if callable(state) else ())
                 if t.device.type != "meta" and t.numel() * t.element_size() == t.untyped_storage().nbytes()}
        # meta tensors come from the sizing pass of an untrusted config's build, which is thrown away
        if any(t.numel() and t.device.type != "meta" and t.untyped_storage().data_ptr() not in whole for t in skipped):
            log.debug("%s: an initialiser touched a tensor outside the state dict; building it again with its init",
                      spec.name)
            return _build(spec, plugin_id, args, overrides, where)
    return model


def _keeps_unloaded_tensors(model) -> bool:
    """True if a module holds a tensor a strict load does not fill: a non-persistent buffer or a tensor attribute."""
    import torch

    modules = model.modules() if isinstance(model, torch.nn.Module) else ()
    for m in modules:
        if getattr(m, "_non_persistent_buffers_set", None):
            return True
        if any(isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter) for v in vars(m).values()):
            return True
    return False


def _spec_for_config(cfg: dict[str, Any], where: str) -> tuple[ModelSpec, str]:
    """The installed model a config.json selects; never anything a config could name itself."""
    name = cfg["model"]
    found = registry.catalog().models.get(name)
    req = cfg["plugin"].get("requirement", cfg["plugin"]["distribution"])
    if found is None:
        raise PluginNotInstalled(f"{where} needs model {name!r} from {cfg['plugin']['distribution']}, "
                                 f"which is not installed: pip install '{req}'")
    spec, plugin_id = found
    status = registry.catalog().statuses[plugin_id]
    if status.dist and status.dist.lower().replace("_", "-") != cfg["plugin"]["distribution"].lower().replace("_", "-"):
        raise UnsafeConfig(f"{where} asks for {name!r} from {cfg['plugin']['distribution']}, but the installed "
                           f"{name!r} comes from {status.dist}; refusing to load weights into another plugin's model")
    try:
        from packaging.requirements import Requirement

        r = Requirement(req)
        if status.version and not r.specifier.contains(status.version, prereleases=True):
            log.warning("%s wants %s, installed %s %s", where, req, status.dist, status.version)
    except Exception:  # noqa: BLE001 - a version check is advice, never a failure
        pass
    return spec, plugin_id


def create(name: str, pretrained: bool = False, *, allow_pickle: bool = False, cast_weights: bool = False,
           device: Any = None, **overrides: Any):
    """Build a model by name, optionally with pretrained weights.

    Args:
        name: ``arch``, ``arch.tag``, ``hf-hub:org/repo[@revision]`` or ``local-dir:PATH``.
        pretrained: load weights: the default tag for ``arch``, the repo's or folder's weights for
            ``hf-hub:`` and ``local-dir:`` (without it, only the architecture is rebuilt from
            config.json). ``arch.tag`` always loads its weights.
        allow_pickle: accept a pickle checkpoint in ``local-dir:`` (loaded with weights_only=True).
        cast_weights: convert weights stored in another dtype than the model's (refused otherwise).
        device: where the model lives (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, a ``torch.device``); checked
            before anything is built or fetched. Weights are checked and loaded on the CPU, then moved.
        **overrides: builder arguments, checked against the builder's signature.

    Raises:
        ModelNotFound, PluginNotInstalled, PluginBroken: the name does not lead to an installed, working model.
        UnknownArgument: an override the builder does not take, or a plain value of the wrong type.
        UnsafeConfig: a config.json asks for what zoo never does, or for a model above ``ZOO_MAX_PARAMS``.
        WeightsNotFound, WeightsCorrupt, WeightsMismatch, DownloadFailed: the weights cannot be had or used.
        DeviceUnavailable: ``device`` is not a device name, or this torch build or machine does not have it.

    >>> import zoo
    >>> model = zoo.create("derf_vit", depth=2)  # doctest: +SKIP
    >>> model.zoo.pretrained                    # doctest: +SKIP
    False
    """
    if device is None:
        return _create(name, pretrained, allow_pickle, cast_weights, overrides)
    from .task import resolve_device

    dev = resolve_device(device)  # a bad device fails before a build or a download
    return _create(name, pretrained, allow_pickle, cast_weights, overrides).to(dev)


def _create(name: str, pretrained: bool, allow_pickle: bool, cast_weights: bool, overrides: dict[str, Any]):
    source, ident, extra = registry.parse_model_name(name)
    if source == "hf-hub":
        return _create_from_hub(ident, weights.check_revision(extra or "main"), pretrained, overrides, cast_weights)
    if source == "local-dir":
        return _create_from_dir(Path(ident), pretrained, overrides, allow_pickle, cast_weights)
    spec, plugin_id, tag = registry.lookup(name)
    if tag is not None:
        pretrained = True
    tag = (tag or spec.pretrained_tag) if pretrained else None
    w = spec.weights.get(tag) if tag is not None else None
    # The weights are fetched, read and hashed on another thread while the model is built: file reads and sha256
    # release the GIL, so the hash every load now pays is hidden behind the build where cores allow.
    pending = _in_background(_fetch_tag, spec, w) if w is not None else None
    if pending is None:
        model = _build(spec, plugin_id, {}, overrides, "")
        if not pretrained:
            return model
        raise WeightsNotFound(f"{spec.name} has no pretrained weights; create it with pretrained=False "
                              f"(`zoo list --pretrained` shows the models that have them)")
    model = _build_for_weights(spec, plugin_id, {}, overrides, "")  # its random init would be overwritten
    got = pending()
    if got.cfg is not None and got.cfg.get("model_args") and dict(got.cfg["model_args"]) != dict(model.zoo.model_args):
        model = _build_for_weights(spec, plugin_id, got.cfg["model_args"], overrides, f"in {got.where}/config.json")
    # the bytes fetch() hashed are the bytes loaded: the file is not read again
    weights.load_into(model, got.data, cast=cast_weights, name=f"{got.where}/{hubformat.WEIGHTS_NAME}")
    model.zoo = replace(model.zoo, tag=tag, pretrained=True, repo=w.repo, revision=w.revision,
                        commit=got.commit, sha256=got.digest, source=got.source)
    return model


@dataclass
class _Got:
    """A tag's checked weight bytes and where they came from."""

    commit: str | None
    cfg: dict[str, Any] | None
    digest: str
    data: bytearray
    source: str
    where: str


def _fetch_tag(spec: ModelSpec, w) -> _Got:
    """The checked weights of a registered tag: from its shipped snapshot when it has one, else from the Hub.

    A snapshot's files are held to the sha256s the plugin pins, so its bytes are the Hub's bytes: reading them
    from the installed package costs no network and works offline. A snapshot that is missing or fails its
    check (an edited install) is reported and the Hub is tried. A Hub tag pinned by hash is checked against
    those hashes; an unpinned one is resolved to a commit whose config.json (checked against its blob id
    there) carries the manifest.
    """
    folder = weights.snapshot_folder(w.snapshot) if w.snapshot else None
    if folder is not None:
        try:
            return _from_snapshot(spec, w, folder)
        except (WeightsCorrupt, WeightsNotFound, FileNotFoundError) as exc:
            log.warning("%s: the shipped snapshot %s cannot be used (%s); trying the Hub", spec.name, w.snapshot, exc)
    fetched = weights.fetch(w.repo, w.revision, dict(w.files) or {hubformat.CONFIG_NAME: None})
    where = f"{w.repo}@{fetched.commit}"
    if hubformat.WEIGHTS_NAME in w.files:
        return _Got(fetched.commit, None, w.files[hubformat.WEIGHTS_NAME], fetched.data.pop(hubformat.WEIGHTS_NAME),
                    "registry", where)
    cfg = hubformat.parse_config(fetched.data[hubformat.CONFIG_NAME], f"{where}/config.json")
    if cfg["model"] != spec.name:
        raise UnsafeConfig(f"{where} holds {cfg['model']!r}, not {spec.name!r}")
    digest = cfg["weights"].get(hubformat.WEIGHTS_NAME, {}).get("sha256")
    if digest is None:
        raise WeightsNotFound(f"{where}: config.json lists no {hubformat.WEIGHTS_NAME}")
    data = weights.fetch(w.repo, fetched.commit, {hubformat.WEIGHTS_NAME: digest}).data[hubformat.WEIGHTS_NAME]
    return _Got(fetched.commit, cfg, digest, data, "registry", where)


def _from_snapshot(spec: ModelSpec, w, folder: Path) -> _Got:
    where = f"{w.snapshot}"
    raw = weights.read_verified(folder / hubformat.CONFIG_NAME, w.files[hubformat.CONFIG_NAME],
                                name=f"{where}/{hubformat.CONFIG_NAME}")
    cfg = hubformat.parse_config(raw, f"{where}/{hubformat.CONFIG_NAME}")
    if cfg["model"] != spec.name:
        raise UnsafeConfig(f"{where} holds {cfg['model']!r}, not {spec.name!r}")
    digest = w.files[hubformat.WEIGHTS_NAME]
    data = weights.read_verified(folder / hubformat.WEIGHTS_NAME, digest, name=f"{where}/{hubformat.WEIGHTS_NAME}")
    return _Got(w.revision if w.pinned else None, cfg, digest, data, "package", where)


def _in_background(fn, *args):
    """Start ``fn(*args)`` on a daemon thread; return a function that waits for it and returns or raises its result."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which re-raises it
            box["error"] = exc

    thread = threading.Thread(target=run, name="zoo-fetch", daemon=True)
    thread.start()

    def result():
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

    return result


def _create_from_config(cfg: dict[str, Any], where: str, overrides: dict[str, Any], pretrained: bool = False):
    spec, plugin_id = _spec_for_config(cfg, where)
    build = _build_for_weights if pretrained else _build  # weights about to be loaded: skip the random init
    return build(spec, plugin_id, dict(cfg.get("model_args", {})), overrides, f"in {where}/config.json")


def _create_from_hub(repo: str, revision: str, pretrained: bool, overrides: dict[str, Any], cast_weights: bool):
    # config.json is checked against the blob id the Hub gave it at this commit (fetch), then parsed from those bytes
    fetched = weights.fetch(repo, revision, {hubformat.CONFIG_NAME: None})
    where = f"hf-hub:{repo}@{fetched.commit}"
    cfg = hubformat.parse_config(fetched.data[hubformat.CONFIG_NAME], f"{where}/config.json")
    model = _create_from_config(cfg, where, overrides, pretrained)
    model.zoo = replace(model.zoo, tag=cfg.get("tag"))
    if not pretrained:
        return model
    digest = cfg["weights"].get(hubformat.WEIGHTS_NAME, {}).get("sha256")
    if digest is None:
        raise WeightsNotFound(f"{where}: config.json lists no {hubformat.WEIGHTS_NAME}")
    data = weights.fetch(repo, fetched.commit, {hubformat.WEIGHTS_NAME: digest}).data[hubformat.WEIGHTS_NAME]
    weights.load_into(model, data, cast=cast_weights, name=f"{where}/{hubformat.WEIGHTS_NAME}")
    model.zoo = replace(model.zoo, pretrained=True, repo=repo, revision=revision, commit=fetched.commit,
                        sha256=digest, source="hf-hub")
    return model


def _create_from_dir(directory: Path, pretrained: bool, overrides: dict[str, Any], allow_pickle: bool,
                     cast_weights: bool):
    cfg, directory = hubformat.local_files(directory)
    model = _create_from_config(cfg, f"local-dir:{directory}", overrides, pretrained)
    model.zoo = replace(model.zoo, tag=cfg.get("tag"))
    if not pretrained:
        return model
    names = list(cfg.get("weights", {}))
    if not names:
        pickles = [p for p in directory.iterdir() if p.suffix in weights.PICKLE_SUFFIXES]
        if not pickles:
            raise WeightsNotFound(f"local-dir:{directory}: config.json lists no weight file")
        path = pickles[0]
        if not allow_pickle:
            weights.read_state_dict(path)  # refuses, naming the fix, without reading the file
        data, _ = weights.read_file(path)
        digest = hashlib.sha256(data).hexdigest()
    else:
        path = directory / names[0]
        digest = cfg["weights"][names[0]]["sha256"]
        if not path.is_file():
            raise WeightsNotFound(f"local-dir:{directory}: {names[0]} is missing")
        try:
            data = weights.read_verified(path, digest, name=str(path))
        except FileNotFoundError as exc:
            raise WeightsNotFound(f"local-dir:{directory}: {names[0]} is missing") from exc
    weights.load_into(model, data, allow_pickle=allow_pickle, cast=cast_weights, name=str(path))
    model.zoo = replace(model.zoo, pretrained=True, repo=None, revision=None, commit=None, sha256=digest,
                        source="local-dir")
    return model


def _provenance(model) -> Provenance:
    prov = getattr(model, "zoo", None)
    if not isinstance(prov, Provenance):
        raise NotAZooModel("this model was not created by zoo.create(), so zoo does not know its name and "
                            "arguments; create it with zoo.create(NAME, **args) and load your state_dict into it")
    return prov


def _state_for_saving(model) -> dict:
    """The state dict with tensors that share storage (tied weights) kept once, and contiguous."""
    seen: dict[tuple, str] = {}
    kept = {}
    for k, v in model.state_dict().items():
        key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape), tuple(v.stride()))
        if v.numel() and key in seen:
            continue
        seen[key] = k
        kept[k] = v.detach()
    # only tensors that share storage with another kept tensor (views of one buffer) need their own copy
    users = Counter(v.untyped_storage().data_ptr() for v in kept.values() if v.numel())
    return {k: v.clone() if v.numel() and users[v.untyped_storage().data_ptr()] > 1 else v.contiguous()
            for k, v in kept.items()}


def save_pretrained(model, directory: str | os.PathLike, *, metrics: dict | None = None,
                    overwrite_card: bool = False, repo_id: str | None = None) -> Path:
    """Write ``config.json``, ``model.safetensors`` and ``README.md`` into ``directory`` atomically.

    An existing README.md is kept unless ``overwrite_card=True``.

    >>> zoo.save_pretrained(zoo.create("derf_vit"), "out/derf")  # doctest: +SKIP
    """
    from safetensors.torch import save_file

    prov, metrics = _saving(model, metrics)
    with tempfile.TemporaryDirectory() as tmp:
        wpath = Path(tmp) / hubformat.WEIGHTS_NAME
        save_file(_state_for_saving(model), str(wpath), metadata={"format": "pt"})  # one key: safetensors orders keys at random
        config, card = _config_and_card(prov, weights.sha256_file(wpath), metrics, repo_id)
        files = {hubformat.CONFIG_NAME: config, hubformat.WEIGHTS_NAME: wpath, hubformat.CARD_NAME: card}
        keep = () if overwrite_card else (hubformat.CARD_NAME,)
        return hubformat.write_folder(directory, files, keep=keep, move=(hubformat.WEIGHTS_NAME,))


def _saving(model, metrics: dict | None) -> tuple[Provenance, dict | None]:
    """The provenance to save and the metrics for the card; raises before anything is written if an argument
    cannot go into config.json."""
    prov = _provenance(model)
    if metrics is None and prov.metrics:
        metrics = dict(prov.metrics)  # what zoo.evaluate measured on this model, so the card says it
    hubformat.to_json_args(dict(prov.model_args))
    return prov, metrics


def _config_and_card(prov: Provenance, digest: str, metrics: dict | None, repo_id: str | None) -> tuple[bytes, bytes]:
    """config.json (listing the weights' sha256) and the model card, as the bytes to write."""
    import json

    cfg = hubformat.build_config(prov, {hubformat.WEIGHTS_NAME: digest}, metrics)
    spec = registry.catalog().models.get(prov.name, (None, None))[0]
    card = hubformat.render_card(prov, cfg, paper=spec.paper if spec else None,
                                 license=spec.license if spec else "mit", repo_id=repo_id)
    return (json.dumps(cfg, indent=2, sort_keys=True) + "\n").encode(), card.encode()


def push_to_hub(model, repo_id: str, *, revision: str | None = None, create_pr: bool = False,
                private: bool = False, metrics: dict | None = None, overwrite_card: bool = False,
                commit_message: str | None = None, token: str | None = None, fill_cache: bool = True) -> str:
    """Push a model as one commit (config, weights, card) and return the commit id.

    Uses ``create_repo(exist_ok=True)`` then one ``upload_folder`` commit; honours HF_ENDPOINT and
    HF_TOKEN. A card already on the Hub is left alone unless ``overwrite_card=True``. With ``fill_cache``
    the pushed files are then fetched into the Hub cache, so offline loads work without another pull.
    """
    from huggingface_hub import HfApi

    prov = _provenance(model)
    if revision is not None:
        weights.check_revision(revision)  # before any client call: a revision names a file in the client's cache
    from huggingface_hub import CommitOperationAdd
    from safetensors.torch import save_file

    prov, metrics = _saving(model, metrics)
    api = HfApi(token=token)
    # the folder is written inside the Hub cache when it can be, so that the pushed files move into the cache (a
    # rename) instead of being downloaded back: the weights are written once and never travel twice
    with tempfile.TemporaryDirectory(dir=_cache_tmp_parent(), prefix=".zoo-push-") as tmp, _pushing(repo_id):
        folder = Path(tmp)
        wpath = folder / hubformat.WEIGHTS_NAME
        save_file(_state_for_saving(model), str(wpath), metadata={"format": "pt"})
        # the client hashes an LFS file to upload it: config.json takes that sha256 rather than hashing it again
        w_op = CommitOperationAdd(path_in_repo=hubformat.WEIGHTS_NAME, path_or_fileobj=str(wpath))
        sha = getattr(getattr(w_op, "upload_info", None), "sha256", None)
        digest = sha.hex() if isinstance(sha, bytes) and len(sha) == 32 else weights.sha256_file(wpath)
        config, card = _config_and_card(prov, digest, metrics, repo_id)
        (folder / hubformat.CONFIG_NAME).write_bytes(config)
        ops = [w_op, CommitOperationAdd(path_in_repo=hubformat.CONFIG_NAME, path_or_fileobj=config)]
        api.create_repo(repo_id, private=private, exist_ok=True)
        if overwrite_card or not api.file_exists(repo_id, hubformat.CARD_NAME, revision=revision):
            ops.append(CommitOperationAdd(path_in_repo=hubformat.CARD_NAME, path_or_fileobj=card))
        info = api.create_commit(repo_id, ops, revision=revision, create_pr=create_pr,
                                 commit_message=commit_message or f"zoo: push {prov.id}")
        commit = info.oid
        log.info("pushed %s to %s@%s", prov.id, repo_id, commit)
        if fill_cache and not create_pr and not _cache_pushed(folder, repo_id, revision or "main", commit):
            _fill_cache(repo_id, revision or "main", token)
    return commit


def _cache_tmp_parent() -> str | None:
    """The Hub cache folder when it exists and is writable (a push's files can then be renamed into it), else None."""
    try:
        folder = Path(weights.hub_cache_dir())
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder) if os.access(folder, os.W_OK) else None
    except OSError:
        return None


def _cache_pushed(folder: Path, repo: str, revision: str, commit: str) -> bool:
    """Put the config and weights just pushed at ``commit`` into the Hub cache, as ``hf_hub_download`` lays it out.

    blobs/<id> (the weights by their sha256, as the Hub names an LFS file; config.json by its git blob sha1, as it
    names a regular one), snapshots/<commit>/<file> -> ../../blobs/<id>, refs/<revision> = commit. Files are moved
    when the folder sits on the cache's file system, else copied. False (and nothing half-written is visible:
    every piece is renamed into place) when it cannot be done, e.g. without symlinks; the caller then downloads.
    """
    import json
    import shutil

    from huggingface_hub.file_download import repo_folder_name

    root = Path(weights.hub_cache_dir()) / repo_folder_name(repo_id=repo, repo_type="model")
    try:
        # save_pretrained hashed the weights for config.json a moment ago: not hashed again
        digest = json.loads((folder / hubformat.CONFIG_NAME).read_text())["weights"][hubformat.WEIGHTS_NAME]["sha256"]
        blobs, snap = root / "blobs", root / "snapshots" / commit
        blobs.mkdir(parents=True, exist_ok=True)
        snap.mkdir(parents=True, exist_ok=True)
        for name in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME):
            src = folder / name
            data_id = digest if name == hubformat.WEIGHTS_NAME else weights._git_blob_sha1(src.read_bytes())
            blob = blobs / data_id
            if not blob.exists():
                staged = blobs / f".{data_id}.zoo-incomplete"
                if os.stat(src).st_dev == os.stat(blobs).st_dev:
                    os.replace(src, staged)
                else:
                    shutil.copyfile(src, staged)
                os.replace(staged, blob)
            link = snap / name
            tmp_link = snap / f".{name}.zoo-link"
            tmp_link.unlink(missing_ok=True)
            os.symlink(os.path.relpath(blob, snap), tmp_link)
            os.replace(tmp_link, link)
        if revision == commit:
            return True
        ref = root / "refs" / revision
        ref.parent.mkdir(parents=True, exist_ok=True)
        staged_ref = ref.with_name(f".{ref.name}.zoo-ref")
        staged_ref.write_text(commit)
        os.replace(staged_ref, ref)
        return True
    except (OSError, ValueError, KeyError) as exc:
        log.debug("could not place the pushed files in the Hub cache (%s); downloading them instead", exc)
        return False


@contextlib.contextmanager
def _pushing(repo: str):
    """Turn an unreachable or refusing Hub into one ``PushFailed`` line; check reachability first (one connect)."""
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError

    down = weights.hub_unreachable()
    if down is not None:
        raise PushFailed(f"cannot push {repo}: the Hub at {constants.ENDPOINT} is unreachable ({down}); nothing was "
                         f"pushed. Fix: start a hub (`zoo hub serve`) and point HF_ENDPOINT at it, or check the network")
    try:
        yield
    except (HfHubHTTPError, *weights._transport_errors()) as exc:
        raise PushFailed(f"pushing {repo} to {constants.ENDPOINT} failed: {type(exc).__name__}: {exc}. A push is one "
                         f"commit, so the repo is as it was; check HF_TOKEN (writes need one) and retry") from exc


def _fill_cache(repo: str, revision: str, token: str | None = None) -> None:
    """Fetch a just-pushed repo's config and weights once, so ``HF_HUB_OFFLINE=1`` loads of ``revision`` work at once.

    The client records which commit ``revision`` named (``refs/<revision>``) only when it downloads by that name.
    A failure here costs nothing but the warm cache: the push itself succeeded.
    """
    from huggingface_hub import hf_hub_download

    try:
        for file in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME):
            hf_hub_download(repo, file, revision=revision, token=token)
    except Exception as exc:  # noqa: BLE001 - the push is done; only the convenience copy failed
        log.warning("pushed, but could not fill the Hub cache for offline loads (%s: %s)", type(exc).__name__, exc)


def publish(org: str | None = None, names: list[str] | None = None, *, token: str | None = None,
            fill_cache: bool = True) -> list[dict[str, Any]]:
    """Push every installed tag's shipped snapshot to the Hub at ``HF_ENDPOINT`` (one commit per repo).

    ``org`` replaces the organisation of each tag's repo (``zoo-models/x`` -> ``ORG/x``); ``names`` limits it to
    these ``NAME.TAG``. The files pushed are the ones the plugin pins (their sha256 is checked first), so a
    later Hub load verifies against the same pins. With ``fill_cache`` each file is then fetched once at
    the new commit, so ``HF_HUB_OFFLINE=1`` loads from the Hub cache work at once. Returns, per tag, the repo,
    commit and the ``WeightsSpec`` arguments to pin.
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    wanted = set(names or [])
    out = []
    for name in registry.list_models(pretrained=True):
        if wanted and name not in wanted:
            continue
        spec, _, tag = registry.lookup(name)
        w = spec.weights[tag]
        folder = weights.snapshot_folder(w.snapshot) if w.snapshot else None
        if folder is None:
            if wanted:
                raise WeightsNotFound(f"{name} ships no snapshot in its plugin: train and push it instead "
                                      f"(`zoo train {name} --push`)")
            continue
        for file in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME):
            weights.verify_file(folder / file, w.files[file], name=f"{w.snapshot}/{file}")
        repo = f"{org}/{w.repo.split('/', 1)[1]}" if org else w.repo
        with _pushing(repo):
            api.create_repo(repo, exist_ok=True)
            info = api.upload_folder(folder_path=str(folder), repo_id=repo, commit_message=f"zoo: publish {name}")
        commit = info.oid
        if fill_cache:
            _fill_cache(repo, "main", token)
        out.append({"name": name, "repo": repo, "commit": commit, "pin": {"repo": repo, "revision": commit}})
        log.info("published %s to %s@%s", name, repo, commit)
    return out
