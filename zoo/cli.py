"""The ``zoo`` command: a thin layer over the library API.

``zoo list``, ``zoo info`` and ``zoo plugins`` never import torch; every other command imports it
only when it runs.
"""
from __future__ import annotations

import os
import sys

from . import registry
from .errors import ZooError

TYPE_CHECKING = False  # `zoo list` imports this module: argparse, json, logging, pathlib, typing only when used
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from types import SimpleNamespace
    from typing import Any


def _print_json(data: Any) -> None:
    import json

    print(json.dumps(data, indent=2, sort_keys=False, default=str))


def _kv(pairs: list[str], option: str = "--set") -> dict[str, Any]:
    import json

    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ZooError(f"{option} expects KEY=VALUE (a JSON value, or a plain string), got {pair!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _progress(a: Any) -> bool:
    """Progress bars: on a terminal, unless --quiet."""
    return not getattr(a, "quiet", False) and sys.stderr.isatty()


def cmd_list(a: argparse.Namespace) -> int:
    if a.tools:
        tools = registry.list_tools(a.pattern)
        if a.json:
            cat = registry.catalog()
            _print_json([{"name": t, "plugin": cat.tools[t][1], "inputs": cat.tools[t][0].inputs,
                          "outputs": cat.tools[t][0].outputs} for t in tools])
        else:
            print("\n".join(tools))
        return 0
    names = registry.list_models(a.pattern, pretrained=a.pretrained, task=a.task, plugin=a.plugin)
    if a.json:
        cat = registry.catalog()
        rows = []
        for n in names:
            spec, pid = cat.models[n.split(".")[0]]
            rows.append({"name": n, "plugin": pid, "task": spec.task, "tags": list(spec.weights)})
        _print_json(rows)
    else:
        print("\n".join(names))
    return 0


def _print_paper(p: dict[str, Any] | None) -> None:
    if p:
        year, arxiv = (f" ({p['year']})" if p["year"] else ""), (f" arXiv:{p['arxiv']}" if p["arxiv"] else "")
        print(f"paper:    {p['title']}{year}{arxiv}")


def cmd_info(a: argparse.Namespace) -> int:
    if a.name not in registry.catalog().models and a.name in registry.catalog().tools:
        return _tool_info(a)
    data = registry.info(a.name)
    if a.json:
        _print_json(data)
        return 0
    print(f"{data['name']}  (plugin {data['plugin']}, {data['distribution']} {data['version']})")
    _print_paper(data["paper"])
    print(f"task:     {data['task']}")
    print(f"builder:  {data['builder']}" + (f"  (registered defaults {data['defaults']})" if data["defaults"] else ""))
    if data["arguments"] is not None:
        for arg in data["arguments"]:
            kind = f": {arg['annotation']}" if arg["annotation"] else ""
            default = f" = {arg['default']}" if arg["default"] is not None else "  (required)"
            print(f"  {arg['name']}{kind}{default}")
        print(f"  set any of them with `zoo create {data['name']} --set NAME=VALUE` or zoo.create({data['name']!r}, NAME=VALUE)")
    print(f"license:  {data['license']}")
    if data["description"]:
        print(f"about:    {data['description']}")
    for tag, w in data["weights"].items():
        pin = f"pinned {w['revision'][:12]}" if w["pinned"] else f"unpinned ({w['revision']})"
        if w["shipped"] is not None:
            digest = w["files"]["model.safetensors"][:12]
            where = f"ships in the plugin ({w['shipped'] / 1e6:.2f} MB, sha256 {digest}): loads offline"
        elif w["recipe"]:
            where = f"Hub only ({w['repo']}, {pin}); to make it here: zoo train {data['name']}.{tag} --out DIR"
        else:
            where = f"Hub only ({w['repo']}, {pin}), source={w['source']}"
        print(f"weights:  {data['name']}.{tag}  {where}")
    if data["claim"] is not None:
        c = data["claim"]
        print(f"claim:    {c['claim']}")
        print(f"          measure it: {c['command']}  (its declared budget: {c['budget_s']:.0f} s per row and seed on "
              f"one CPU thread; --quick: a smoke test in seconds)")
    return 0


def cmd_plugins(a: argparse.Namespace) -> int:
    statuses = registry.plugins()
    if a.json:
        _print_json([s.__dict__ for s in statuses])
        return 0
    for s in statuses:
        line = f"{s.id:<24} {s.dist or '-':<28} {s.version or '-':<10} {s.state:<9}"
        names = s.models + s.tasks
        detail = s.error if s.error else ", ".join(names[:8]) + (f", ... (+{len(names) - 8} more)" if len(names) > 8 else "")
        print(f"{line} {detail}")
    return 0


def _summary(model) -> dict[str, Any]:
    from .task import model_device

    prov = model.zoo
    return {"id": prov.id, "parameters": sum(p.numel() for p in model.parameters()), "plugin": prov.plugin,
            "version": prov.plugin_version, "config": dict(prov.model_args), "pretrained": prov.pretrained,
            "repo": prov.repo, "commit": prov.commit, "sha256": prov.sha256, "source": prov.source,
            "device": str(model_device(model))}


def _tool_info(a: argparse.Namespace) -> int:
    data = registry.tool_info(a.name)
    if a.json:
        _print_json(data)
        return 0
    print(f"{data['name']}  (tool of plugin {data['plugin']}, {data['distribution']} {data['version']})")
    _print_paper(data["paper"])
    print(f"function: {data['function']}")
    for key in ("inputs", "outputs", "description"):
        if data[key]:
            print(f"{key + ':':<9} {data[key]}")
    for line in data["usage"]:
        print(f"usage:    {line}")
    return 0


def cmd_analyze(a: argparse.Namespace) -> int:
    from .activations import activations, analyze
    from .evaluation import evaluate
    from .factory import create, resolve_target

    spec, _ = registry.tool(a.tool)  # an unknown tool fails before a model is built
    pretrained = a.pretrained if a.pretrained is not None else "." in a.model.split(":")[-1] or a.model.startswith(
        ("hf-hub:", "local-dir:"))
    model = create(a.model, pretrained=pretrained, device=a.device, **_kv(a.set))
    task = a.task or model.zoo.task
    if task is None:
        raise ZooError(f"{a.model} names no task; pass --task T (whose probe data the tool is run on)")
    tspec = registry.task(task)
    if not tspec.probe_data:
        raise ZooError(f"task {task} provides no probe data for analysis tools (TaskSpec.probe_data); use the Python "
                       f"API with your own inputs: zoo.analyze({a.tool!r}, model, inputs=x, labels=y)")
    if a.steps and not model.zoo.pretrained:  # train it on its task first, as zoo eval would
        evaluate(model, task, steps=a.steps, seed=a.seed, baselines=[])
    inputs, labels = resolve_target(tspec.probe_data)(n=a.n, seed=a.seed, **_kv(a.task_arg, "--task-arg"))
    layers = [x for x in a.layers.split(",") if x] if a.layers else None
    acts = activations(model, inputs, layers=layers, labels=labels, pool=a.pool)
    result = analyze(spec.name, acts, out_dir=a.out, **_kv(a.tool_arg, "--tool-arg"))
    if int(os.environ.get("RANK", "0")) != 0:
        return 0
    _print_json({"tool": spec.name, "model": model.zoo.id, "task": task, "layers": acts.names, "n": acts.n,
                 "trained_steps": a.steps if a.steps and not model.zoo.pretrained else 0, "result": result})
    return 0


def cmd_create(a: argparse.Namespace) -> int:
    from .factory import create

    model = create(a.name, pretrained=a.pretrained, device=a.device, **_kv(a.set))
    _print_json(_summary(model))
    return 0


def cmd_eval(a: argparse.Namespace) -> int:
    from .evaluation import evaluate

    kwargs = _kv(a.task_arg, "--task-arg")
    # options that have their own flag may also come as --task-arg (the task's describe() lists them): one source each
    own = {"steps": ("--steps", a.steps), "budget_s": ("--budget", a.budget), "seed": ("--seed", a.seed),
           "out_dir": ("--out", a.out), "device": ("--device", a.device)}
    for key, (flag, value) in own.items():
        if key in kwargs and value is not None:
            raise ZooError(f"{key} given twice: by {flag} and by --task-arg {key}=...; keep one")
    opts = {key: kwargs.pop(key, value) for key, (_, value) in own.items()}
    a.name = _plugin_to_model(a.name, a.task)
    result = evaluate(a.name, task=a.task, steps=opts["steps"], budget_s=opts["budget_s"],
                      seed=0 if opts["seed"] is None else opts["seed"], pretrained=a.pretrained, progress=_progress(a),
                      model_args=_kv(a.set), device=opts["device"], **({"out_dir": opts["out_dir"]} if opts["out_dir"]
                                                                        else {}), **kwargs)
    if int(os.environ.get("RANK", "0")) != 0:  # under torchrun, rank 0 reports
        return 0
    if a.json:
        _print_json(result.to_dict())
    else:
        print(f"task {result.task}: {result.n} evaluation examples, {result.seconds:.1f} s")
        print(result.table(a.name))
        for name, path in result.artifacts.items():
            print(f"{name}: {path}")
    return 0


def _plugin_to_model(name: str, task: str | None) -> str:
    """``zoo eval PLUGIN``: the plugin's first model (on ``task`` when given), said on stderr; any other name as is."""
    from . import registry

    cat = registry.catalog()
    status = cat.statuses.get(name)
    if name in cat.models or status is None or status.state != "ok" or not status.models:
        return name
    models = [m for m in status.models if task is None or cat.models[m][0].task == task] or list(status.models)
    others = [m for m in status.models if m != models[0]]
    print(f"{name} is a plugin: evaluating its model {models[0]}" + (f" (others: {', '.join(others)})" if others else ""),
          file=sys.stderr)
    return models[0]


def _registry_file(path: str | None) -> Path | None:
    from pathlib import Path

    p = Path(path or "registry.yaml")
    return p if p.exists() else None


def cmd_bench(a: argparse.Namespace) -> int:
    from pathlib import Path

    from .bench import bench
    from .task import format_table

    out_dir = a.out
    if out_dir is None:  # next to registry.yaml in a checkout, else ./leaderboards
        reg = _registry_file(None)
        out_dir = (reg.parent if reg is not None else Path.cwd()) / "leaderboards"
    command = " ".join(["zoo", "bench", *sys.argv[2:]]) if sys.argv[1:2] == ["bench"] else f"zoo bench {a.task}"
    data = bench(a.task, models=a.models, quick=a.quick, seeds=a.seeds, steps=a.steps, budget_s=a.budget,
                 options=_kv(a.task_arg, "--task-arg"), out_dir=out_dir, force=a.force, command=command, device=a.device)
    if int(os.environ.get("RANK", "0")) != 0:
        return 0
    if a.json:
        _print_json(data)
        return 0
    table = {r["model"]: {"params": r["params"], **{k: v["mean"] if isinstance(v, dict) else v
                                                    for k, v in r["metrics"].items()}} for r in data["rows"]}
    print(format_table(table))
    ran, kept = data["rerun"], data["kept"]
    print(f"\n{len(ran)} model(s) run, {len(kept)} kept from the last leaderboard (code and protocol unchanged)"
          + (f": {', '.join(kept)}" if kept else ""))
    print(f"leaderboard: {Path(out_dir) / (a.task + '.yaml')} (means over seeds {data['protocol']['seeds']}; "
          "`zoo site build DIR` shows it)")
    return 0


def cmd_reproduce(a: argparse.Namespace) -> int:
    from .claims import reproduce

    target = None
    if a.record:  # an explicit step: a checkout's registry.yaml (and its READMEs) change only when asked
        if a.quick:
            raise ZooError("a --quick run is a smoke test: it is never recorded (drop --quick or --record)")
        target = _registry_file(a.registry)
        if target is None:
            raise ZooError(f"--record: no {a.registry or 'registry.yaml'} here; run from a zoo checkout's root or "
                           "pass --registry PATH")
    result = reproduce(a.id, quick=a.quick, seeds=a.seeds, record=target)
    print(result.render())
    print(f"\n{result.seconds:.0f} s wall, {result.cpu_seconds:.0f} s CPU in this process")
    print(f"\nrecorded in {target}" if target is not None else "\n(not recorded: add --record to write registry.yaml)")
    return 0


def cmd_train(a: argparse.Namespace) -> int:
    from .training import train

    target = None
    if a.record:  # an explicit step, as for `zoo reproduce --record`
        target = _registry_file(a.registry)
        if target is None:
            raise ZooError(f"--record: no {a.registry or 'registry.yaml'} here; run from a zoo checkout's root or "
                           "pass --registry PATH")
    result = train(a.name, seed=a.seed, out=a.out, push=a.push, record=target)
    _print_json({"model": a.name, "metrics": result.metrics, "files": result.files})
    if result.folder is not None:
        print(f"saved to {result.folder}")
    if result.commit is not None:
        print(f"pushed to {result.repo}@{result.commit} ({os.environ.get('HF_ENDPOINT', 'https://huggingface.co')})")
        pins = ", ".join(f'"{k}": "{v}"' for k, v in result.files.items())
        print(f'pin it: WeightsSpec(repo="{result.repo}", revision="{result.commit}", files={{{pins}}}, ...)')
    if target is not None:
        print(f"recorded in {target}")
    return 0


def cmd_push(a: argparse.Namespace) -> int:
    from .factory import create, push_to_hub

    model = create(a.name, pretrained=not a.random_init)
    commit = push_to_hub(model, a.repo, revision=a.revision, create_pr=a.create_pr, private=a.private,
                         overwrite_card=a.overwrite_card)
    print(commit)
    return 0


def cmd_convert(a: argparse.Namespace) -> int:
    from .factory import resolve_target, save_pretrained

    spec, plugin_id, tag = registry.lookup(a.name)
    w = spec.weights.get(tag) if tag else None
    if w is None or w.converter is None:
        raise ZooError(f"{a.name} has no converter; name a tag whose weights come from an official release")
    if not os.path.isfile(a.source):
        raise ZooError(f"{a.source}: no such file; pass the official checkpoint you downloaded from the authors' release")
    model = resolve_target(w.converter, plugin_id)(a.source)
    folder = save_pretrained(model, a.to, overwrite_card=True)
    print(f"converted {a.source} -> {folder}")
    return 0


def cmd_hub_serve(a: argparse.Namespace) -> int:
    from .hubserver.cli import serve  # the one implementation, shared with `python -m zoo.hubserver`

    return serve(a)


def cmd_hub_publish(a: argparse.Namespace) -> int:
    from .factory import publish

    done = publish(a.org, a.names or None)
    if a.json:
        _print_json(done)
        return 0
    from huggingface_hub import constants

    for d in done:
        print(f"{d['name']}: {d['repo']}@{d['commit']}")
    print(f"\npublished {len(done)} snapshot(s) to {constants.ENDPOINT}. To pin a tag to its Hub commit, add "
          f'revision="<commit>" (and repo= if --org changed it) to its WeightsSpec.' if done else
          "no installed tag ships a snapshot")
    return 0


def cmd_registry(a: argparse.Namespace) -> int:
    from . import registry_file

    if a.action == "build":
        data = registry_file.build(a.path, catalog_md=a.catalog)
        registry_file.write(a.path, data)
        registry_file.sync_readme(a.path, data)
        counts: dict[str, int] = {}
        for p in data["papers"]:
            counts[p["status"]] = counts.get(p["status"], 0) + 1
        print(f"wrote {a.path}: {len(data['papers'])} papers; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return 0
    diff = registry_file.check(a.path)
    if diff:
        print("\n".join(diff))
        print(f"\n{a.path} is stale: run `zoo registry build`", file=sys.stderr)
        return 1
    print(f"{a.path} is up to date")
    return 0


def cmd_site(a: argparse.Namespace) -> int:
    from pathlib import Path

    from .site import build_site  # jinja2 (the site extra) is imported only when the build runs

    path = Path(a.registry) if a.registry else Path("registry.yaml")
    if not a.registry and not path.exists():  # outside a checkout: the registry shipped in the package
        path = registry.registry_path() or path
    if not path.exists():
        raise ZooError(f"{path} not found: run `zoo site build` in a checkout or pass --registry PATH")
    try:
        pages = build_site(a.dir, registry=path, leaderboards=a.leaderboards)
    except ModuleNotFoundError as exc:
        raise ZooError(f"the site needs {exc.name}: pip install 'zoo-core[site]'") from exc
    except (FileExistsError, ValueError) as exc:  # a folder that is not a previous site, a malformed leaderboard
        raise ZooError(str(exc)) from exc
    print(f"wrote {len(pages)} pages to {a.dir}: open {Path(a.dir) / 'index.html'} "
          f"(or `python -m http.server -d {a.dir}`)")
    return 0


def parser() -> argparse.ArgumentParser:
    import argparse

    p = argparse.ArgumentParser(prog="zoo", description="A plugin-based model zoo for representation learning.")
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines or bars (bars are drawn only on a terminal; lines go to stderr)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="list models (no torch import)")
    s.add_argument("pattern", nargs="?", help="fnmatch pattern, e.g. 'mrl*'")
    s.add_argument("--pretrained", action="store_true", help="list arch.tag names that have weights")
    s.add_argument("--task", help="only models evaluated on this task (see the README's task table)")
    s.add_argument("--plugin", help="only models of this plugin id (see `zoo plugins`)")
    s.add_argument("--tools", action="store_true", help="list the analysis tools instead (zoo analyze TOOL MODEL)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("info", help="what zoo knows about a model or a tool (no torch import)")
    s.add_argument("name", help="a model name, NAME.TAG, or a tool name")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(fn=cmd_info)

    s = sub.add_parser("plugins", help="installed plugins, their state and errors (no torch import)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(fn=cmd_plugins)

    s = sub.add_parser("create", help="build a model and print its summary and provenance")
    s.add_argument("name", help="NAME, NAME.TAG, hf-hub:ORG/REPO[@REV] or local-dir:PATH")
    s.add_argument("--pretrained", action="store_true", help="load its weights (NAME.TAG, hf-hub: and local-dir: always do)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="builder argument (JSON value)")
    s.add_argument("--device", help="cpu (default), cuda, cuda:N or mps; under torchrun, cuda is each rank's own GPU")
    s.set_defaults(fn=cmd_create)

    s = sub.add_parser("eval", help="evaluate a model on its task, next to the task's baselines")
    s.add_argument("name", help="NAME, NAME.TAG, hf-hub:ORG/REPO[@REV] or local-dir:PATH")
    s.add_argument("--task", help="evaluate on this task instead of the model's own")
    s.add_argument("--steps", type=int, help="training steps for models without weights (default: the task's)")
    s.add_argument("--budget", type=float, help="seconds of training per model")
    s.add_argument("--seed", type=int, default=None, help="seed of the data split, initialisation and batches (default 0)")
    s.add_argument("--pretrained", action="store_true", default=None, help="load weights (default: tags, hf-hub:, local-dir:)")
    s.add_argument("--out", help="folder for figures the task writes (PNG; tasks that draw them, e.g. image_fit)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="builder argument, as in `zoo create` (JSON value; `zoo info NAME` lists them)")
    s.add_argument("--task-arg", action="append", metavar="KEY=VALUE",
                   help="task option (JSON value), e.g. mode=inpaint for image_fit; the task's describe() lists them")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--device", help="cpu (default), cuda, cuda:N or mps; under torchrun, cuda is each rank's own GPU")
    s.set_defaults(fn=cmd_eval)

    s = sub.add_parser("analyze", help="apply an analysis tool to a model's activations on its task's data")
    s.add_argument("tool", help="tool name (see `zoo list --tools`)")
    s.add_argument("model", help="NAME, NAME.TAG, hf-hub:ORG/REPO[@REV] or local-dir:PATH")
    s.add_argument("--task", help="whose probe data to use (default: the model's task)")
    s.add_argument("--layers", help="comma-separated layer names or patterns (default: top-level blocks and output)")
    s.add_argument("--pool", choices=["mean", "first", "last", "flatten"], help="pool tokens / maps (default: keep tokens)")
    s.add_argument("--n", type=int, help="number of probe inputs (default: the task's whole held-out set)")
    s.add_argument("--steps", type=int, help="train an untrained model this many steps on its task first")
    s.add_argument("--seed", type=int, default=0, help="seed of the probe order and of training (default 0)")
    s.add_argument("--pretrained", action="store_true", default=None, help="load weights (default: tags, hf-hub:, local-dir:)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="builder argument (JSON value)")
    s.add_argument("--task-arg", action="append", metavar="KEY=VALUE", help="probe-data option, e.g. dataset=fashion_mnist")
    s.add_argument("--tool-arg", action="append", metavar="KEY=VALUE", help="the tool's own option (`zoo info TOOL`)")
    s.add_argument("--out", help="folder for the tool's figures (PNG)")
    s.add_argument("--device", help="cpu (default), cuda, cuda:N or mps")
    s.set_defaults(fn=cmd_analyze)

    s = sub.add_parser("reproduce", help="measure a plugin's paper claim (--record writes it to registry.yaml)")
    s.add_argument("id", help="plugin id (see `zoo plugins`)")
    s.add_argument("--quick", action="store_true", help="a few seconds, for smoke tests (not recorded)")
    s.add_argument("--seeds", type=lambda v: [int(x) for x in v.split(",")], help="override the claim's seeds, e.g. 0,1,2,3,4")
    s.add_argument("--record", action="store_true",
                   help="write the result to registry.yaml and regenerate the READMEs' tables (a checkout's)")
    s.add_argument("--registry", help="registry.yaml to record in (default ./registry.yaml)")
    s.set_defaults(fn=cmd_reproduce)

    s = sub.add_parser("bench", help="every installed model of a task under one protocol -> leaderboards/TASK.yaml")
    s.add_argument("task", help="task name (see `zoo tasks`)")
    s.add_argument("--models", type=lambda v: [m for m in v.split(",") if m], help="a subset, e.g. siren,fresh_siren")
    s.add_argument("--quick", action="store_true", help="smoke run: one seed, 20 steps")
    s.add_argument("--seeds", type=lambda v: [int(x) for x in v.split(",")], help="seeds (default 0,1,2)")
    s.add_argument("--steps", type=int, help="training steps for every model (default: the task's)")
    s.add_argument("--budget", type=float, help="training seconds for every model")
    s.add_argument("--task-arg", action="append", default=[], metavar="KEY=VALUE", help="a task option, for every model")
    s.add_argument("--force", action="store_true", help="rerun models whose code and protocol did not change")
    s.add_argument("--out", help="folder of the leaderboards (default: leaderboards/ next to registry.yaml)")
    s.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    s.add_argument("--device", help="cpu (default), cuda, cuda:N or mps; under torchrun, cuda is each rank's own GPU")
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("train", help="train a pretrained tag with its recipe")
    s.add_argument("name", help="NAME.TAG")
    s.add_argument("--seed", type=int, default=0, help="seed passed to the recipe (default 0)")
    s.add_argument("--out", help="save the weights to this folder")
    s.add_argument("--push", nargs="?", const=True, default=False, help="push to the tag's repo (or REPO)")
    s.add_argument("--record", action="store_true", help="write the metrics (and pushed commit) to registry.yaml")
    s.add_argument("--no-record", action="store_true", help=argparse.SUPPRESS)  # the default since 0.2.0; kept for old scripts
    s.add_argument("--registry", help="registry.yaml to record in (default ./registry.yaml)")
    s.set_defaults(fn=cmd_train)

    s = sub.add_parser("push", help="push a model's weights to a Hub repo")
    s.add_argument("name", help="arch.tag, hf-hub:..., local-dir:...")
    s.add_argument("repo", help="ORG/NAME on the Hub that HF_ENDPOINT points at")
    s.add_argument("--revision", help="branch to commit to (default main)")
    s.add_argument("--create-pr", action="store_true", help="open a pull request instead of committing to the branch")
    s.add_argument("--private", action="store_true", help="create the repo private")
    s.add_argument("--overwrite-card", action="store_true", help="replace a model card edited on the Hub")
    s.add_argument("--random-init", action="store_true", help="push a freshly initialised model")
    s.set_defaults(fn=cmd_push)

    s = sub.add_parser("convert", help="convert an official checkpoint to the zoo format once")
    s.add_argument("name", help="NAME.TAG whose weights come from an official release")
    s.add_argument("source", help="the original checkpoint file")
    s.add_argument("--to", required=True, help="folder to write the converted zoo-format weights to")
    s.set_defaults(fn=cmd_convert)

    s = sub.add_parser("hub", help="the local Hugging Face-compatible hub")
    hs = s.add_subparsers(dest="hub_command", required=True)
    from .hubserver.cli import add_arguments as add_hub_arguments  # options only: the server loads when it runs

    h = hs.add_parser("serve", help="serve a hub persisted in --root (same options as python -m zoo.hubserver)")
    add_hub_arguments(h)
    h.set_defaults(fn=cmd_hub_serve)
    h = hs.add_parser("publish", help="push every installed tag's shipped snapshot to the hub at HF_ENDPOINT")
    h.add_argument("names", nargs="*", metavar="NAME.TAG", help="only these tags (default: every tag with a snapshot)")
    h.add_argument("--org", help="publish under this organisation instead of each tag's own (e.g. your user name)")
    h.add_argument("--json", action="store_true", help="machine-readable output")
    h.set_defaults(fn=cmd_hub_publish)

    s = sub.add_parser("registry", help="build or check registry.yaml")
    s.add_argument("action", choices=["build", "check"], help="build: regenerate it from the plugins; check: fail if stale")
    s.add_argument("--path", default="registry.yaml", help="the registry file (default registry.yaml)")
    s.add_argument("--catalog", help="import paper fields from CATALOG.md (build only)")
    s.set_defaults(fn=cmd_registry)

    s = sub.add_parser("site", help="the static catalogue site (papers, tasks, models, leaderboards)")
    ss = s.add_subparsers(dest="site_command", required=True)
    h = ss.add_parser("build", help="render registry.yaml and leaderboards/ into DIR (open DIR/index.html)")
    h.add_argument("dir", help="a new or empty folder, or one a previous build made")
    h.add_argument("--registry", help="registry.yaml to render (default ./registry.yaml, else the installed one)")
    h.add_argument("--leaderboards", help="folder of <task>.yaml leaderboards (default: leaderboards/ next to the registry)")
    h.set_defaults(fn=cmd_site)
    return p


def _list_args(argv: list[str]) -> SimpleNamespace | None:
    """``list [PATTERN] [--pretrained] [--task T] [--plugin P]`` parsed by hand, or None for anything else.

    Importing argparse and building the parser cost more CPU than the listing itself (benchmarks/RESULTS.md,
    start-up), so the plain listing skips them; ``--json``, ``-h``, ``-v`` and any error go through argparse.
    """
    from types import SimpleNamespace

    a = SimpleNamespace(pattern=None, pretrained=False, task=None, plugin=None, json=False, verbose=False, tools=False)
    it = iter(argv)
    for arg in it:
        if arg == "--pretrained":
            a.pretrained = True
        elif arg == "--tools":
            a.tools = True
        elif arg in ("--task", "--plugin"):
            value = next(it, None)
            if value is None or value.startswith("-"):
                return None
            setattr(a, arg[2:], value)
        elif arg.startswith("-") or a.pattern is not None:
            return None
        else:
            a.pattern = arg
    return a


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    fast = _list_args(argv[1:]) if argv[:1] == ["list"] else None
    if fast is not None:
        args = fast
        args.fn = cmd_list
    else:
        import logging

        args = parser().parse_args(argv)
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        from .task import set_progress

        set_progress(bars=_progress(args), lines=not args.quiet)
        if not _progress(args):  # no bars at all: tasks' own (tqdm reads TQDM_DISABLE), the Hub client's downloads
            os.environ.setdefault("TQDM_DISABLE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        return args.fn(args)
    except BrokenPipeError:  # `zoo list | head`: the reader left; no traceback (Python docs' recipe)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except ZooError as exc:  # zoo's own errors say what to fix: one line; anything else keeps its traceback
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
