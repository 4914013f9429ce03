#!/usr/bin/env bash
# Run HERE (a machine with PyPI): builds every zoo distribution as a wheel into .whl/ (ignored by git), plus the
# pure-Python packages the GPU image may lack, so `run` can carry them (`carry: [".whl"]`, 64 MiB in all) to a GPU
# machine that reaches no package index. Then: run benchmarks/gpu/run.sh there (see its header).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
rm -rf .whl && mkdir .whl
PY=${PY:-.venv/bin/python}
dists=()
for d in . nn tasks/*/ plugins/*/; do [ -f "$d/pyproject.toml" ] && dists+=("$d"); done
"$PY" -m pip wheel -q --no-deps --no-build-isolation -w .whl "${dists[@]}"
# what zoo-core needs beyond the image's list (KINDS.md: torch, numpy, safetensors, huggingface_hub are there)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl pluggy jinja2 markupsafe pyyaml
du -sh .whl && ls .whl | wc -l
