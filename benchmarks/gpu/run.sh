#!/usr/bin/env bash
# The GPU checks of issue 20 (devices), one prepared script for a lent GPU machine (never needed by the project):
#   here:   bash benchmarks/gpu/prepare.sh
#   device: run(command="bash benchmarks/gpu/run.sh", carry=[".whl"], timeout_s=540)
# It installs the carried wheels into /tmp/site, then
#   1. runs the conformance kit of every installed plugin on CUDA (pytest --zoo-device cuda: the same seeded weights on
#      the GPU, the task contract, outputs equal to the CPU's to float tolerance, save_pretrained from the GPU) and the
#      device tests (tests/test_devices.py, whose CUDA test runs only there);
#   2. evaluates digits_classify on the GPU and on the CPU (same seed) and reports both;
#   3. distributed evaluation over NCCL: with >= 2 GPUs, `torchrun --nproc_per_node=N zoo eval ... --device cuda`
#      against the single-process result (the sharded counts must add up to the same accuracy); with one GPU (NCCL
#      refuses two ranks on one device) an NCCL process group of size 1 and zoo.task's NCCL all-reduce branch;
#   4. `zoo bench digits_classify --quick --device cuda` into $OUT.
# Everything it prints is also in $OUT/gpu.log; record the figures in benchmarks/RESULTS.md ("GPU checks").
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/zoo-gpu-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/gpu.log") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "FAILED: installing the carried wheels (run benchmarks/gpu/prepare.sh first)"; exit 1; }
export PYTHONPATH=/tmp/site ZOO_CACHE_DIR=/tmp/zoo-cache
nvidia-smi -L
python3 - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NO CUDA")
PY
status=0
echo "== 1. conformance kit on CUDA, every plugin =="
python3 -m pytest -q -p no:cacheprovider --zoo-device cuda plugins/*/tests -k conformance tests/test_devices.py \
    --junitxml "$OUT/conformance-cuda.xml" || status=1
echo "== 2. digits_classify on cuda vs cpu (seed 0, 300 steps) =="
for dev in cpu cuda; do
  python3 -m zoo.cli eval gelu_mlp_digits --steps 300 --device "$dev" --json > "$OUT/digits-$dev.json" || status=1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r['metrics']['accuracy'], r['seconds'])" \
      "$OUT/digits-$dev.json" "$dev"
done
echo "== 3. distributed evaluation over NCCL =="
n=$(python3 -c "import torch; print(torch.cuda.device_count())")
if [ "$n" -ge 2 ]; then
  torchrun --standalone --nproc_per_node="$n" -m zoo.cli eval gelu_mlp_digits --steps 300 --device cuda --json \
      > "$OUT/digits-nccl.json" || status=1
  python3 -c "import json; a=json.load(open('$OUT/digits-cuda.json')); b=json.load(open('$OUT/digits-nccl.json')); \
print('nccl', $n, 'ranks accuracy', b['metrics']['accuracy'], 'single', a['metrics']['accuracy'])"
else
  python3 - <<'PY' || status=1
import os, torch, torch.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.tensor([1.0, 2.0], dtype=torch.float64, device="cuda")
dist.all_reduce(t)
print("one GPU: NCCL group of size 1, all_reduce", t.cpu().tolist(), "(multi-rank NCCL needs >= 2 GPUs)")
dist.destroy_process_group()
PY
fi
echo "== 4. zoo bench digits_classify --quick --device cuda =="
python3 -m zoo.cli bench digits_classify --quick --device cuda --models gelu_mlp_digits,derf_vit --out "$OUT/leaderboards" || status=1
echo "gpu checks: $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
