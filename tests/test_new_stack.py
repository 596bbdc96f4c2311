"""The stack tests guard the product, not the shipped examples: a new single-host stack, added to a scratch copy
of the project as docs/add-your-own-model.md says, passes every stack test of the suite (issue "A platform
team adopts it", item 2)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

NEW = "vllm-llama31-8b-v6e8-1host"
STACK_FILE = """\
# Llama 3.1 8B Instruct on one TPU v6e VM with 8 chips (ct6e-standard-8t, topology 2x4): a single-host group.
config:
  gcp:project: tpu-serving-demo
  gcp:region: us-east5
  zone: us-east5-b
  production: false
  cluster:
    name: llama8b
    # One group, no spare slice: hold minor and node upgrades back until the end of support (you upgrade).
    maintenance:
      exclusions:
        - name: hold-node-upgrades
          startTime: "2026-01-03T00:00:00Z"
          scope: NO_MINOR_OR_NODE_UPGRADES
    cloudNat: existing
    existingNatRouter: llama405b-nat-router
    existingNat: llama405b-nat
    securityGroup: gke-security-groups@example.com
  tpuSlices:
    - name: v6e8
      machineType: ct6e-standard-8t
      topology: 2x4
      diskSizeGb: 100
  buckets:
    - purpose: checkpoints
      workloadAccess: read
    - purpose: scratch
  workloadIdentity:
    namespace: llama8b
    kubernetesServiceAccount: vllm
  tenancy:
    operators:
      groups: [inference-oncall@example.com]
  serving:
    backend: vllm
    slices: [v6e8]
    model: llama-3.1-8b-instruct
    servedModelName: meta-llama/Llama-3.1-8B-Instruct
    singleGroup: accepted
  observability:
    notReadyMinutes: 90
    unpaged: true
"""
STACK_TESTS = [
    "tests/tools/runtime/test_runtime_stacks.py",
    "tests/tools/runtime/test_runtime_admission.py",
    "tests/test_stacks.py",
    "tests/tools/reference/test_schema.py",
    "tests/policy/test_policy.py",
    "tests/components/tenancy/test_tenancy.py",
    "tests/components/cost/test_cost.py",
    "tests/components/backends/test_rollout.py",
    "tests/components/operations/test_prober.py",
]
"""The modules whose tests take every stack (``@pytest.mark.parametrize("stack", STACKS)``)."""


@pytest.mark.slow
def test_new_stack_a_single_host_stack_passes_every_stack_test(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "stacks", project / "stacks")
    (project / "stacks" / f"Pulumi.{NEW}.yaml").write_text(STACK_FILE)
    env = {**os.environ, "TPU_SERVING_STACKS_ROOT": str(project)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            "-n",
            "0",
            "-k",
            NEW,
            *STACK_TESTS,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    assert passed >= 21, summary  # the 21 stack tests of the modules above all ran over the new stack
