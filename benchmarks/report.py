"""Write RESULTS.md (figures, commands, medians, ratios, targets) and the scale plot from run.py's results."""
from __future__ import annotations

from pathlib import Path

GROWTH_LIMIT = 1.5  # per-plugin cost 300 -> 1,000 over 1 -> 300: 1 linear, ~1.2 N log N, ~4.3 quadratic


def _s(x: float) -> str:
    """Seconds, readably."""
    if x is None or x != x:
        return "n/a"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def _f(x: float | None, fmt: str = ".2f") -> str:
    return "n/a" if x is None else format(x, fmt)


def _iqr(d: dict) -> str:
    return f"{_s(d['p25'])} – {_s(d['p75'])}"


def _status(ok: bool, gap: str = "") -> str:
    return "**met**" if ok else f"**not met** ({gap})" if gap else "**not met**"


def _code(cmd) -> str:
    return "`" + (" ".join(cmd) if isinstance(cmd, list) else cmd).replace("|", "\\|") + "`"


def summary_rows(r: dict) -> list[tuple[str, str, str, str]]:
    rows = []
    if "startup" in r:
        s = r["startup"]
        q = s["timm_over_zoo_list_paired"]
        rows.append(("timm listing / `zoo list` (whole processes)",
                     f"{q:.1f}x (ratio of medians {s['timm_over_zoo_list']:.1f}x)", ">= 10x", _status(q >= 10, f"{q:.1f}x")))
        if "zoo_list_over_bare_cpu_paired" in s:
            q = s["zoo_list_over_bare_cpu_paired"]
            rows.append(("`zoo list` / `python -c pass`, CPU time (whole processes)",
                         f"{q:.2f}x (ratio of medians {s['zoo_list_over_bare_cpu']:.2f}x; pip's console-script wrapper "
                         f"alone {s['wrapper_over_bare_cpu_paired']:.2f}x)", "<= 2x", _status(q <= 2, f"{q:.2f}x")))
        q = s["import_over_bare_ms_paired"]
        rows.append(("`import zoo` above `python -c pass` (whole processes)",
                     f"+{q:.1f} ms (difference of medians +{s['import_over_bare_ms']:.1f} ms; CPU time "
                     f"+{s['import_over_bare_cpu_ms']:.1f} ms)", "< 50 ms", _status(q < 50, f"{q - 50:.1f} ms over")))
    if "scale" in r:
        k = r["scale"]["kinds"]
        for kind in ("list_warm", "list_cold"):
            t = k[kind]["wall"]["1000"]["median"]
            c = k[kind]["cpu"]["1000"]["median"]
            rows.append((f"`zoo list`, 1,000 plugins, {kind.split('_')[1]} cache (whole process)",
                         f"{_s(t)} (CPU time {_s(c)})", "< 1 s", _status(t < 1.0, f"{_s(t - 1.0)} over")))
        checks = [(f"{kind} {label}", k[kind][f"{what}_growth"]) for kind, what, label in (
            ("list_cold", "inproc", "time"), ("create_cold", "inproc", "time"),
            ("list_cold", "rss_exit", "memory"), ("list_warm", "rss_exit", "memory"),
            ("create_cold", "rss_exit", "memory"), ("create_warm", "rss_exit", "memory"))]
        checks.insert(2, ("warm discovery time (repeated in one process)", r["scale"]["discovery_warm"]["time_growth"]))
        for label, g in checks:
            e = g["marginal_ratio"]
            ok = e is None or e <= GROWTH_LIMIT
            shown = "no measurable growth" if e is None else f"{e:.2f} (fitted N^{_f(g['exponent'])})"
            rows.append((f"growth of {label}: cost per plugin 300 → 1,000 / 1 → 300", shown,
                         f"<= {GROWTH_LIMIT} (1 = linear, 4.3 = N^2)", _status(ok, shown)))
    if "create" in r:
        c = r["create"]
        for other, label in (("timm", '`timm.create_model("resnet18")`'), ("builder", "its builder called directly")):
            q, qm = c[f"zoo_over_{other}_paired"], c[f"zoo_over_{other}"]
            rows.append((f'`zoo.create("mrl_resnet18")` / {label}', f"{q:.3f} (ratio of medians {qm:.3f})", "<= 1.05",
                         _status(q <= 1.05, f"{(q - 1) * 100:.1f}%")))
    if "pretrained" in r:
        p = r["pretrained"]
        for tag in ("pinned", "unpinned"):
            q, qm = p["ratios"][f"zoo_{tag}_over_raw_paired"], p["ratios"][f"zoo_{tag}_over_raw"]
            rows.append((f"pretrained load, {tag} tag / raw safetensors load (end to end)",
                         f"{q:.3f} (ratio of medians {qm:.3f})", "<= 1.10", _status(q <= 1.10, f"{(q - 1) * 100:.1f}%")))
        q = p["ratios"]["zoo_overhead_only_over_raw"]
        rows.append(("zoo's own additions (resolution, verification, checks) / raw end-to-end load",
                     f"{q * 100:.2f}% ({_s(p['sides']['zoo_overhead_only']['median'])})", "<= 10%",
                     _status(q <= 0.10, f"{q * 100:.1f}%")))
        q, qm = p["ratios"]["zoo_steps_over_raw_load_paired"], p["ratios"]["zoo_steps_over_raw_load"]
        rows.append(("zoo's resolution + verification + checked load / raw load, on a built model",
                     f"{q:.3f} (ratio of medians {qm:.3f})", "<= 1.10", _status(q <= 1.10, f"{(q - 1) * 100:.1f}%")))
        n = p["requests"]["zoo_pinned"]["requests"]
        rows.append(("requests to the hub, pinned tag, warm cache, default online mode",
                     f"{n} in {p['requests']['zoo_pinned']['calls']} loads", "0", _status(n == 0, f"{n}")))
        n = p["requests"]["zoo_unpinned"]["per_call"]
        rows.append(("requests to the hub, unpinned tag, warm cache, default online mode", f"{n:.0f} HEAD per load", "0",
                     _status(n == 0, f"{n:.0f} per load: resolving `main`; 0 with HF_HUB_OFFLINE=1")))
        off = p["offline"]
        n = sum(off["connects"].values())
        rows.append(("socket connects, all sides, HF_HUB_OFFLINE=1 + dead HF_ENDPOINT", str(n), "0", _status(n == 0, str(n))))
    if "hub" in r:
        h = r["hub"]
        rows.append(("local hub push, 100 MB (`upload_file`)", f"{h['upload_file']['mb_per_s']:.0f} MB/s", "(no target)", "-"))
        rows.append(("local hub pull, 100 MB (`hf_hub_download`)", f"{h['hf_hub_download']['mb_per_s']:.0f} MB/s",
                     "(no target)", "-"))
        rows.append(("`zoo.push_to_hub` / `timm.models.push_to_hf_hub`, 102 MB, same hub",
                     f"{h['zoo_push_over_timm_push']:.2f}", "(no target)", "-"))
        rows.append(("`hf_hub_download` of a cached small file, default (HEAD per call)",
                     f"{h['small']['online_default']['rps']:.0f} req/s", "(no target)", "-"))
    return rows


def _list_cpu_lines(s: dict) -> list[str]:
    """The `zoo list` CPU-time bullets of section 1 (absent from results written before they were measured)."""
    if "zoo_list_over_bare_cpu_paired" not in s:
        return []
    imp = s["zoo_list_imports"]
    costly = ", ".join(f"`{m}`" for m in imp["costly_modules"]) or "none"
    return [f"* `zoo list` / bare interpreter, CPU time = **{s['zoo_list_over_bare_cpu_paired']:.2f}x** paired (ratio of "
            f"medians {s['zoo_list_over_bare_cpu']:.2f}x; target <= 2x). pip's console-script wrapper alone is "
            f"{s['wrapper_over_bare_cpu_paired']:.2f}x; what zoo adds to it is {s['zoo_own_cpu_ms']:.1f} ms of CPU time "
            "(median of the per-round differences).",
            f"* One warm `zoo list` under `python -X importtime` imported {imp['modules']} modules; of importlib.metadata, "
            f"pluggy, email, zoo.specs (discovery's slow path), json and logging: {costly}; plugin modules imported: "
            f"{len(imp['plugins_imported'])}."]


def write_markdown(r: dict, path: Path, plot_name: str | None) -> None:
    m = r["meta"]
    L: list[str] = []
    L += ["# zoo benchmark results", "",
          f"Generated by `{m['command']}` on {m['date']} in {m['wall_s'] / 60:.1f} min"
          + (" (**--quick**: too few repetitions for the figures to be trusted)" if m.get("quick") else "") + ".", "",
          f"**Absolute times are from a shared, loaded machine** ({m['cpus']} CPUs, shared with about 7 other engineers' "
          f"jobs): load average {m['load_start'][0]:.1f} / {m['load_start'][1]:.1f} / {m['load_start'][2]:.1f} "
          f"(1/5/15 min) at the start, {m['load_end'][0]:.1f} / {m['load_end'][1]:.1f} / {m['load_end'][2]:.1f} at the end. "
          "Every ratio compares sides measured in the same run, interleaved round by round in a rotating order, so "
          "load hits both sides alike; medians, with the 25th–75th percentiles. A ratio is given as the median over "
          "rounds of the per-round ratio (*paired*: the two sides ran next to each other, so a change of load "
          "between rounds cancels), with the ratio of the medians beside it; targets are judged on the paired one. "
          "Absolute times on an idle machine are several times smaller (see the CPU times).", "",
          f"Versions: Python {m['python']}, " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + ".", "",
          "## Summary", "", "| figure | measured | target | status |", "|---|---|---|---|"]
    L += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in summary_rows(r)]
    L.append("")
    if "startup" in r:
        s = r["startup"]
        L += ["## 1. Start-up (whole processes)", "",
              "Each side is a fresh process, from spawn to exit; peak RSS and CPU time from `wait4`. The venv's installed "
              f"plugins are all there (`zoo list` printed {s['zoo_list_models']} models; editable plugins are imported on "
              "every listing, installed ones come from zoo's listing cache, warm here). `console_wrapper` runs what "
              "pip's generated `zoo` script does before any zoo code (`import re` and one `re.sub`).", "",
              "| side | command | median | p25 – p75 | n | CPU time (median) | peak RSS |", "|---|---|---|---|---|---|---|"]
        for name, d in s["sides"].items():
            L.append(f"| {name} | {_code(d['cmd'])} | {_s(d['time']['median'])} | {_iqr(d['time'])} | {d['time']['n']} "
                     f"| {_s(d['cpu']['median'])} | {d['rss']['median']:.0f} MB |")
        L += ["", f"* timm listing / `zoo list` = **{s['timm_over_zoo_list_paired']:.1f}x** paired (ratio of medians "
              f"{s['timm_over_zoo_list']:.1f}x; target >= 10x); in CPU time {s['timm_over_zoo_list_cpu']:.1f}x.",
              f"* `import zoo` - bare interpreter = **{s['import_over_bare_ms_paired']:.1f} ms** paired (difference of "
              f"medians {s['import_over_bare_ms']:.1f} ms; target < 50 ms); in CPU time {s['import_over_bare_cpu_ms']:.1f} ms.",
              *_list_cpu_lines(s),
              "* CPU time (user + system, from `wait4`) is what a process would take on an idle core, roughly: with "
              f"a load average of {m['load_start'][0]:.0f} on {m['cpus']} CPUs, wall times are inflated several-fold.", ""]
    if "scale" in r:
        sc = r["scale"]
        L += ["## 2. Scale with plugin count", "",
              "N generated plugin distributions (dist-info with METADATA, entry_points.txt, RECORD ... and a "
              "byte-compiled package, as pip installs a wheel) in one folder on PYTHONPATH, on top of the venv's own "
              "plugins (which are there at every N, so N = 1 is the baseline). Each plugin registers one trivial model "
              "whose builder returns a plain object (no torch), so `create` measures discovery, lookup and the builder's "
              "import. *cold*: an empty `ZOO_CACHE_DIR` for every run (every plugin.py is imported, then the listing "
              "cache is written); *warm*: the cache from an earlier run. "
              f"Rounds: {sc['rounds']['cold']} cold, {sc['rounds']['warm']} warm, plugin counts interleaved.", "",
              "Commands (`PYTHONPATH=<site-N>`, `ZOO_CACHE_DIR=<empty or warm>`; the list command is the body of the `zoo` "
              "console script, so it is `zoo list`, with a timer and an RSS reading added at its start and end; the "
              "create command is shown for N = 1,000, it creates the last generated plugin's model):", ""]
        for k, c in sc["commands"].items():
            L.append(f"* {k}: {_code(c)}")
        L += ["", "Models listed: " + ", ".join(f"N={n}: {v}" for n, v in sc["listed_models"].items()), "",
              "Time: whole process (spawn to exit) / in-process (first line to end of listing or create; no "
              "interpreter start-up). Memory: peak RSS (`wait4`) / RSS at exit.", "",
              "| N | " + " | ".join(sc["kinds"]) + " |", "|---|" + "---|" * len(sc["kinds"])]
        for n in sc["counts"]:
            cells = [f"{_s(d['wall'][str(n)]['median'])} / {_s(d['inproc'][str(n)]['median'])}; "
                     f"{d['peak_rss'][str(n)]['median']:.0f} / {d['rss_exit'][str(n)]['median']:.1f} MB"
                     for d in sc["kinds"].values()]
            L.append(f"| {n} | " + " | ".join(cells) + " |")
        dw = sc["discovery_warm"]
        L += ["", "Discovery alone with the listing cache warm (`registry.reload()`, repeated in one process per N; "
              f"{sc['rounds']['discovery'][0]} processes x {sc['rounds']['discovery'][1]} reloads):", "",
              "| N | median | p25 – p75 | n |", "|---|---|---|---|"]
        for n in sc["counts"]:
            d = dw["time"][str(n)]
            L.append(f"| {n} | {_s(d['median'])} | {_iqr(d)} | {d['n']} |")
        L += ["", "CPU time (user + system) of the whole process, median (what it would take on an idle core, roughly):", "",
              "| N | " + " | ".join(sc["kinds"]) + " |", "|---|" + "---|" * len(sc["kinds"])]
        for n in sc["counts"]:
            L.append(f"| {n} | " + " | ".join(_s(d["cpu"][str(n)]["median"]) for d in sc["kinds"].values()) + " |")
        L += ["", "Growth above the N = 1 baseline: cost per plugin between two counts (slopes of the medians); their "
              "ratio 300 → 1,000 over 1 → 300; exponent k in d(N) ~ N^k for d(N) = cost(N) - cost(1) (*fit*: least "
              "squares over N = 100, 300, 1,000; 1 = linear, 2 = quadratic; n/a = no growth above the noise):", "",
              "| measure | per plugin, 10 → 100 | per plugin, 100 → 1,000 | per plugin 300 → 1,000 / 1 → 300 "
              "| k, 100 → 1,000 | k, 300 → 1,000 | k, fit |", "|---|---|---|---|---|---|---|"]
        for k, d in sc["kinds"].items():
            for m, unit in (("wall", "ms"), ("cpu", "ms"), ("inproc", "ms"), ("peak_rss", "kB"), ("rss_exit", "kB")):
                g = d[f"{m}_growth"]
                L.append(f"| {k} {m} | {g['per_plugin_10_100_x1000']:.2f} {unit} | {g['per_plugin_100_1000_x1000']:.2f} {unit} "
                         f"| {_f(g['marginal_ratio'])} | {_f(g['exponent_100_1000'])} | {_f(g['exponent_300_1000'])} "
                         f"| {_f(g['exponent'])} |")
        g = dw["time_growth"]
        L.append(f"| discovery, warm, repeated | {g['per_plugin_10_100_x1000']:.2f} ms | {g['per_plugin_100_1000_x1000']:.2f} ms "
                 f"| {_f(g['marginal_ratio'])} | {_f(g['exponent_100_1000'])} | {_f(g['exponent_300_1000'])} "
                 f"| {_f(g['exponent'])} |")
        L += ["", "The summary judges time growth by the cold in-process times and the repeated warm discovery, memory by "
              "the RSS at exit, each with the ratio of the cost of "
              "each plugin from 300 to 1,000 to that of each from 1 to 300 (the two largest increments, so the least "
              f"noisy): 1 for linear growth, about 1.2 for N log N, 4.3 for N^2; <= {GROWTH_LIMIT} counts as linear. "
              "The log-log exponents k use smaller increments and move by ±0.3 between runs here. Peak RSS hides "
              "small growth (a transient peak during start-up is higher than "
              "what N plugins add until N is large), and whole-process time adds interpreter start-up noise.", ""]
        if plot_name:  # generated files are not tracked: the table above holds the same medians
            L += [f"`run.py` also draws these curves to `{plot_name}` next to this file (not tracked).", ""]
    if "create" in r:
        c = r["create"]
        L += ["## 3. create overhead (one process, interleaved)", "",
              f"`.venv/bin/python benchmarks/bench_create.py --reps {c['reps']}`: after a warm-up, {c['reps']} rounds, "
              f"each calling the three sides in a rotating order; torch threads = {c['torch_threads']}.", "",
              "| side | call | parameters | median | p25 – p75 | n |", "|---|---|---|---|---|---|"]
        calls = {"zoo": 'zoo.create("mrl_resnet18")', "timm": 'timm.create_model("resnet18")',
                 "builder": "zoo_mrl.model.mrl_resnet18()"}
        for k, d in c["sides"].items():
            L.append(f"| {k} | `{calls[k]}` | {c['params'][k] / 1e6:.2f} M | {_s(d['median'])} | {_iqr(d)} | {d['n']} |")
        L += ["", f"* zoo / timm = **{c['zoo_over_timm_paired']:.3f}** paired, {c['zoo_over_timm']:.3f} ratio of medians "
              "(target <= 1.05). The MRL model carries 7 nested "
              f"classifiers (0.5 M more parameters than timm's single head), so this includes the plugin's extra work.",
              f"* zoo / builder = **{c['zoo_over_builder_paired']:.3f}** paired, {c['zoo_over_builder']:.3f} ratio of "
              "medians: zoo's own overhead on the identical model "
              f"(lookup, argument check, provenance).", f"* builder / timm = {c['builder_over_timm']:.3f}.", ""]
    if "pretrained" in r:
        p = r["pretrained"]
        L += ["## 4. Pretrained load from a warm cache (~100 MB)", "",
              f"`bench_resnet50` (benchmarks/site: timm ResNet-50, {p['push']['params'] / 1e6:.1f} M parameters, "
              f"{p['seed']['weights_bytes'] / 1e6:.1f} MB safetensors) pushed with `zoo.push_to_hub` to a local hub "
              f"(`zoo.hubserver.LocalHub`) at commit `{p['push']['commit'][:12]}`, and the same weights with "
              "`timm.models.push_to_hf_hub(..., safe_serialization=True)`; one client pull filled its Hub cache "
              "(identical weights checked). `bench_resnet50_pinned` is a generated twin whose tag is pinned to that "
              "commit and its sha256s. Child: `.venv/bin/python benchmarks/bench_pretrained.py measure --weights <cached "
              f"model.safetensors> --reps {p['reps']}` with HF_ENDPOINT at the hub, HF_HUB_DISABLE_XET=1, its own "
              "HF_HUB_CACHE/HF_HOME/ZOO_CACHE_DIR.", "",
              "| side | call | median | p25 – p75 | n | hub requests per call |", "|---|---|---|---|---|---|"]
        calls = {"zoo_pinned": 'zoo.create("bench_resnet50_pinned", pretrained=True)',
                 "zoo_unpinned": 'zoo.create("bench_resnet50", pretrained=True)',
                 "raw": 'm = timm.create_model("resnet50"); m.load_state_dict(safetensors.torch.load_file(path))',
                 "timm_hub": 'timm.create_model("hf-hub:zoo-bench/resnet50-timm", pretrained=True)',
                 "zoo_fetch": "zoo.weights.fetch(repo, commit, {name: sha256})  (built model; resolution + verification)",
                 "zoo_load_into": "zoo.weights.load_into(built, path)  (checked strict load)",
                 "raw_load_only": "built.load_state_dict(safetensors.torch.load_file(path))",
                 "zoo_overhead_only": "fetch + load_into as above, file read and tensor copy stubbed out"}
        for k, d in p["sides"].items():
            rq = p["requests"][k]
            by = ", ".join(f"{n} {m_}" for m_, n in rq["by_method"].items())
            L.append(f"| {k} | `{calls[k]}` | {_s(d['median'])} | {_iqr(d)} | {d['n']} | {rq['per_call']:.0f}"
                     + (f" ({by})" if by else "") + " |")
        q = p["ratios"]
        L += ["", f"* End to end (target <= 1.10): pinned zoo / raw = **{q['zoo_pinned_over_raw_paired']:.3f}** paired "
              f"({q['zoo_pinned_over_raw']:.3f} ratio of medians); unpinned zoo / raw = "
              f"**{q['zoo_unpinned_over_raw_paired']:.3f}** paired ({q['zoo_unpinned_over_raw']:.3f}); timm hf-hub / raw = "
              f"{q['timm_hub_over_raw']:.3f}; pinned zoo / timm hf-hub = {q['zoo_pinned_over_timm_hub']:.3f}. The "
              "raw and timm sides build a ResNet-50 with its random init (~270 ms on an idle core) and then overwrite it; "
              "zoo builds it without the init the strict load overwrites (`factory._SkipInit`, as transformers' "
              "`no_init_weights`), which is why it ends below the raw load.",
              f"* zoo's own steps on a built model, without the build's noise: (fetch + load_into) / raw load = "
              f"**{q['zoo_steps_over_raw_load_paired']:.3f}** paired ({q['zoo_steps_over_raw_load']:.3f} ratio of medians); "
              f"the extra time is {q['zoo_steps_overhead_of_raw_e2e'] * 100:.1f}% "
              "of a raw end-to-end load.",
              f"* zoo's additions alone (`zoo_overhead_only`): {_s(p['sides']['zoo_overhead_only']['median'])}, "
              f"**{q['zoo_overhead_only_over_raw'] * 100:.2f}%** of the raw end-to-end load.",
              f"* Verification: the sha256 of the {p['seed']['weights_bytes'] / 1e6:.0f} MB file takes "
              f"{_s(p['first']['sha256_s'])} here; zoo pays it on the first load of a file's state, on the one in-memory "
              "copy it then loads, overlapped with the model's build in `create`; later loads of the unchanged file "
              "(same inode, size, mtime and ctime, which an in-place edit cannot restore) skip it through a marker in "
              "ZOO_CACHE_DIR/verified. "
              f"In a fresh process the first pinned load took {_s(p['first']['zoo_pinned_call1'])}, the second "
              f"{_s(p['first']['zoo_pinned_call2'])}.",
              "* First pull over the local hub (cold Hub cache, incl. build and verify): "
              f"zoo {_s(p['seed']['zoo_cold_pull_s'])}, "
              f"timm {_s(p['seed']['timm_cold_pull_s'])}. Push: `zoo.push_to_hub` {_s(p['push']['zoo_push_s'])}, "
              f"timm `push_to_hf_hub` {_s(p['push']['timm_push_s'])}.", "",
              "Offline (`HF_HUB_OFFLINE=1`, `HF_ENDPOINT=http://127.0.0.1:9`, same caches), socket `connect` calls "
              "counted in the child:", "", "| side | median | n | socket connects | hub requests |", "|---|---|---|---|---|"]
        off = p["offline"]
        for k, d in off["sides"].items():
            L.append(f"| {k} | {_s(d['median'])} | {d['n']} | {off['connects'][k]} | {off['requests'][k]['requests']} |")
        L += ["", "Online, socket connects per side over the whole loop (keep-alive reuses connections, so hub requests "
              "are the stronger count): " + ", ".join(f"{k} {v}" for k, v in p["connects"].items()) + ".", ""]
    if "hub" in r:
        h = r["hub"]
        L += ["## 5. Local hub throughput", "",
              "`.venv/bin/python benchmarks/bench_hub.py`: the hub is `zoo.hubserver.LocalHub` in the orchestrator "
              "process (its own process, threads per connection); the client is the real huggingface_hub with "
              "HF_HUB_DISABLE_XET=1. MB = 10^6 bytes.", "",
              "| operation | size | median | p25 – p75 | n | MB/s | hub requests per call |", "|---|---|---|---|---|---|---|"]
        for k, label in (("upload_file", "`HfApi().upload_file` (new random bytes; client sha256 + one PUT)"),
                         ("hf_hub_download", "`hf_hub_download` into an empty cache"),
                         ("zoo_push_to_hub", "`zoo.push_to_hub(bench_resnet50)` (save, hash, card, upload)"),
                         ("timm_push_to_hf_hub", "`timm.models.push_to_hf_hub(model, safe_serialization=True)`, interleaved")):
            d = h[k]
            L.append(f"| {label} | {d['mb']:.0f} MB | {_s(d['time']['median'])} | {_iqr(d['time'])} | {d['time']['n']} "
                     f"| {d['mb_per_s']:.0f} | {h['requests'][k]['per_call']:.0f} |")
        L += ["", f"`zoo.push_to_hub` / timm's push of the same model: **{h['zoo_push_over_timm_push']:.2f}** (zoo also "
              "writes config.json and a card and checks for an existing card; the weights are hashed once, by the client's "
              "upload, and the pushed files are moved into the Hub cache rather than downloaded back; issue 22 took it "
              "from 1.44 to about 1.0).", "",
              "Small cached file (`hf_hub_download(repo, \"small.json\")`, 1 KB, already in the cache):", "",
              "| mode | calls | requests/s | hub requests per call |", "|---|---|---|---|"]
        for mode, d in h["small"].items():
            label = ("default online: one HEAD per call (the client checks for a newer commit)" if mode == "online_default"
                     else "`local_files_only=True`: no request")
            L.append(f"| {label} | {d['calls']} | {d['rps']:.0f} | {d['requests_per_call']:.2f} |")
        L.append("")
    if "hub_limits" in r:
        hl = r["hub_limits"]
        old, new = hl["old"], hl["new"]
        L += ["## 6. Local hub under attack (issue 12)", "",
              f"`.venv/bin/python benchmarks/bench_hub_limits.py`, measured {hl.get('section_date', '')}: \"old\" is "
              f"`zoo/hubserver` at {hl['old_rev']} (before the limits), \"new\" the installed one; each side is a server "
              "in its own child process on 127.0.0.1, the same client drives both.", "",
              "| measurement | old | new |", "|---|---|---|"]

        def both(label: str, fmt) -> None:
            if label in old or label in new:
                L.append(f"| {fmt[0]} | {fmt[1](old.get(label))} | {fmt[1](new.get(label))} |")

        both("slow_clients", ("200 clients sending one header byte per second: connections held after 15 s, "
                              "server threads, a normal request meanwhile",
                              lambda d: "-" if d is None else f"{d['still_held']} of {d['slow_connections']}, "
                              f"{d['server_threads']} threads, {_s(d['normal_request_s'])}"))
        both("burst", ("simultaneous connections that failed",
                       lambda d: "-" if d is None else f"{d['failed']} of {d['burst']}"))
        if "listing" in old or "listing" in new:
            for key, label in (("tree_s", "`tree`"), ("tree_recursive_s", "recursive `tree`"),
                               (f"paths_info_{hl['paths']}_s", f"`paths-info` of {hl['paths']} paths")):
                both("listing", (f"{hl['files']} files: {label}",
                                 lambda d, key=key: "-" if d is None or key not in d else _s(d[key])))
        for label, what in (("regular_commit_1x180MB", "one 180 MB regular (non-LFS) file in a commit"),
                            ("regular_commit_24x7.5MB", "the same 180 MB as 24 regular files")):
            both(label, (f"{what}: answer, seconds, server peak RSS",
                         lambda d: "-" if d is None else f"{d.get('answer')}, {_s(d.get('seconds', float('nan')))}, "
                         f"{d.get('peak_rss_mb', float('nan')):.0f} MB"))
        L.append("")
    if "weights" in r:
        w = r["weights"]
        ls, sw = w["load_s"], w["swap"]
        L += ["## 7. Verified loads, old and new (issue 12)", "",
              f"`.venv/bin/python benchmarks/bench_weights.py`, measured {w.get('section_date', '')}: \"old\" is "
              f"`zoo/weights.py` at {w['old_rev']} (hash, then a size/mtime/inode marker, then safetensors reads the "
              "file again), \"new\" the installed one (one read; hashed unless its device/inode/size/mtime/ctime "
              "identity was verified before; loaded from those bytes; dtype and finiteness checked). Same process, "
              "interleaved.", "",
              f"* Cached, verified load of a {w['file_mb']:.0f} MB ResNet-50 state dict into a built model (median of "
              f"{w['reps']}): old {_s(ls['old']['median'])}, new {_s(ls['new']['median'])}, raw safetensors "
              f"{_s(ls['raw']['median'])}; new / raw = **{w['new_over_raw']:.2f}**.",
              f"* {w['swap_loads']} loads while another process swaps the file between the verified weights and other "
              f"valid weights: old loaded OTHER weights {sw['old']['other_weights']} times (verified "
              f"{sw['old']['verified']}, refused {sw['old']['refused']}); new **{sw['new']['other_weights']}** times "
              f"(verified {sw['new']['verified']}, refused {sw['new']['refused']}).", ""]
    L += ["## Reproduce", "", "```", "cd /work/main && .venv/bin/python benchmarks/run.py", "```", "",
          "Raw samples: `results.json`, written next to this file by `run.py` (not tracked).", ""]
    # the side-by-side sections written by benchmarks/peers/*.py are kept as they are
    old = path.read_text() if path.exists() else ""
    start, end = "<!-- peers:start -->", "<!-- peers:end -->"
    if start in old and end in old:
        L += ["", old[old.index(start):old.index(end) + len(end)], ""]
    # so is the GPU section, written from benchmarks/gpu/run.sh's log when a GPU machine is lent
    start, end = "<!-- gpu:start -->", "<!-- gpu:end -->"
    if start in old and end in old:
        L += ["", old[old.index(start):old.index(end) + len(end)], ""]
    path.write_text("\n".join(L))


def plot(r: dict, path: Path) -> bool:
    """Scale curves: time (whole process and in-process) and RSS (peak and at exit) against plugin count."""
    if "scale" not in r:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sc = r["scale"]
    ns = sc["counts"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 6))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (kind, d) in enumerate(sc["kinds"].items()):
        for metric, style, label in (("wall", "-", "whole process"), ("inproc", "--", "in-process")):
            med = [d[metric][str(n)]["median"] for n in ns]
            lo = [med[j] - d[metric][str(n)]["p25"] for j, n in enumerate(ns)]
            hi = [d[metric][str(n)]["p75"] - med[j] for j, n in enumerate(ns)]
            ax1.errorbar(ns, med, yerr=[lo, hi], marker="o", ms=4, capsize=3, ls=style, color=colors[i],
                         label=f"{kind} ({label})")
        ax2.plot(ns, [d["peak_rss"][str(n)]["median"] for n in ns], marker="o", ms=4, color=colors[i], label=f"{kind} (peak)")
        ax2.plot(ns, [d["rss_exit"][str(n)]["median"] for n in ns], marker="s", ms=4, ls="--", color=colors[i],
                 label=f"{kind} (at exit)")
    dw = sc["discovery_warm"]["time"]
    ax1.plot(ns, [dw[str(n)]["median"] for n in ns], marker="^", ms=4, ls=":", color="black",
             label="discovery, warm (repeated in-process)")
    ax1.axhline(1.0, color="grey", ls="--", lw=1, label="1 s target (listing)")
    for ax, ylabel in ((ax1, "time [s] (median, p25-p75)"), (ax2, "RSS [MB] (median)")):
        ax.set_xscale("log")
        ax.set_xlabel("installed plugins (generated) N")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    ax1.set_yscale("log")
    la = r["meta"]["load_start"]
    fig.suptitle(f"zoo list / zoo.create vs plugin count (medians, p25-p75; shared machine, load {la[0]:.1f})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
