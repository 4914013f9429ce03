"""Generate installed plugin distributions for the benchmarks, laid out as pip lays out a wheel.

Each distribution is a ``<name>-<version>.dist-info`` folder (METADATA, WHEEL, entry_points.txt,
top_level.txt, INSTALLER, RECORD) next to its package, in one folder that goes on PYTHONPATH; the
packages are byte-compiled, as ``pip install`` does by default.

    >>> from pathlib import Path
    >>> make_trivial_plugins(Path("/tmp/site-10"), 10)      # doctest: +SKIP
"""
from __future__ import annotations

import base64
import compileall
import hashlib
from pathlib import Path

TRIVIAL_PLUGIN = '''"""Generated benchmark plugin {i}: one trivial model (specs only)."""
from zoo import ModelSpec, Paper, hookimpl

PAPER = Paper(title="Generated benchmark plugin {i}", year=2026)


@hookimpl
def zoo_models():
    return [ModelSpec(name="{model}", builder="{pkg}.model:build", paper=PAPER,
                      defaults={{"width": 4}}, description="a trivial model for the plugin-count benchmark")]
'''

# A torch-free trivial model: the scale benchmark measures discovery and lookup, not torch's import.
TRIVIAL_MODEL = '''"""A trivial model object (no torch), so that create() measures zoo's own work."""


class Tiny:
    def __init__(self, width):
        self.width = width


def build(width: int = 4) -> Tiny:
    return Tiny(width)
'''

PINNED_PLUGIN = '''"""Generated: bench_resnet50 with its weights pinned to one commit of the local hub."""
from zoo import ModelSpec, WeightsSpec, hookimpl


@hookimpl
def zoo_models():
    return [ModelSpec(name="bench_resnet50_pinned", builder="zoo_bench_pinned.model:bench_resnet50",
                      description="bench_resnet50, weights pinned by commit and sha256",
                      weights={{"bench": WeightsSpec(repo="{repo}", revision="{commit}",
                                                     files={{"config.json": "{config_sha}",
                                                            "model.safetensors": "{weights_sha}"}})}})]
'''

PINNED_MODEL = '''"""The same builder as zoo_bench.model (a plugin's builders must live in its own package)."""
from zoo_bench.model import bench_resnet50

__all__ = ["bench_resnet50"]
'''


def _record_line(root: Path, path: Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root).as_posix()},sha256={digest},{len(data)}"


def write_distribution(site: Path, dist: str, version: str, package: str, entry_name: str,
                       files: dict[str, str]) -> Path:
    """Write one installed distribution (package ``files`` + dist-info) into ``site``; return the dist-info."""
    pkg = site / package
    pkg.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (pkg / name).write_text(text)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
                                   f"Summary: generated zoo benchmark plugin\nRequires-Dist: zoo-core>=0.1\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: zoo-benchmarks\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    (info / "entry_points.txt").write_text(f"[zoo]\n{entry_name} = {package}.plugin\n")
    (info / "top_level.txt").write_text(f"{package}\n")
    (info / "INSTALLER").write_text("zoo-benchmarks\n")
    lines = [_record_line(site, p) for p in sorted(pkg.iterdir()) if p.is_file()]
    lines += [_record_line(site, info / n) for n in ("METADATA", "WHEEL", "entry_points.txt", "top_level.txt", "INSTALLER")]
    lines.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return info


def trivial_model_name(i: int) -> str:
    return f"gen{i:04d}_tiny"


def make_trivial_plugins(site: Path, n: int) -> list[str]:
    """``n`` plugin distributions ``zoo-gen0000`` ... in ``site``; returns their model names."""
    site.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(n):
        pkg = f"zoo_gen{i:04d}"
        model = trivial_model_name(i)
        write_distribution(site, f"zoo-gen{i:04d}", "0.1.0", pkg, f"gen{i:04d}",
                           {"__init__.py": "", "plugin.py": TRIVIAL_PLUGIN.format(i=i, model=model, pkg=pkg),
                            "model.py": TRIVIAL_MODEL})
        names.append(model)
    compileall.compile_dir(str(site), quiet=1)
    return names


def make_pinned_bench(site: Path, repo: str, commit: str, config_sha: str, weights_sha: str) -> Path:
    """The ``zoo-bench-pinned`` twin of benchmarks/site's zoo-bench, its tag pinned to ``commit``."""
    info = write_distribution(site, "zoo-bench-pinned", "0.1.0", "zoo_bench_pinned", "bench-pinned", {
        "__init__.py": "",
        "plugin.py": PINNED_PLUGIN.format(repo=repo, commit=commit, config_sha=config_sha, weights_sha=weights_sha),
        "model.py": PINNED_MODEL,
    })
    compileall.compile_dir(str(site), quiet=1)
    return info
