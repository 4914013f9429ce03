"""`zoo eval` under torchrun (2 processes, gloo on CPU) gives the single-process result."""
import json
import os
import subprocess
import sys


def _eval(prefix):
    cmd = prefix + ["-m", "zoo.cli", "eval", "fixture_mlp", "--steps", "30", "--json",
                    "--task-arg", 'baselines=["mlp-ln-relu"]']
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_torchrun_two_processes_equals_one():
    single = _eval([sys.executable])
    multi = _eval([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
                   "--master_addr=127.0.0.1", f"--master_port={_free_port()}"])
    assert multi["metrics"]["accuracy"] == single["metrics"]["accuracy"]
    assert multi["baselines"]["mlp-ln-relu"]["accuracy"] == single["baselines"]["mlp-ln-relu"]["accuracy"]
    assert multi["n"] == single["n"] == 450
