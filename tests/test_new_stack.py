"""The stack tests guard the product, not the shipped examples: a new single-host stack, added to a scratch copy
of the project as docs/add-your-own-model.md says (its example stack file, read from the page), passes every stack test
of the suite and ``make check`` beside the shipped stacks (issue "A platform team adopts it", item 2)."""

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
DOC = ROOT / "docs" / "add-your-own-model.md"


def doc_stack_file() -> str:
    """The example stack file of docs/add-your-own-model.md, step 3, as a reader copies it."""
    text = DOC.read_text()
    found = re.search(rf"`stacks/Pulumi\.{re.escape(NEW)}\.yaml`:\n\n```yaml\n(.*?)```", text, re.S)
    assert found, f"{DOC}: no yaml block after `stacks/Pulumi.{NEW}.yaml`:"
    return found.group(1)


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
    (project / "stacks" / f"Pulumi.{NEW}.yaml").write_text(doc_stack_file())
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
    # make check runs the stacks together (docs/add-your-own-model.md, step 2): the example beside every shipped stack
    # (new-user review of issue 39, Major: the example took the shipped llama8b platform's cluster name, and with it
    # its service account IDs and bucket names)
    checked = subprocess.run(
        [sys.executable, "-m", "tpu_serving_tools.check", "--root", str(project)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    across = [line for line in checked.stdout.splitlines() if line.startswith("across the ")]
    shipped = len(list((ROOT / "stacks").glob("Pulumi.*.yaml")))
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert across and across[0].startswith(f"across the {shipped + 1} stack(s): "), across
