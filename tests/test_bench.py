"""The preview benchmark still runs (it has no other caller to keep it working)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_bench_measures_preview_and_import():
    proc = subprocess.run(
        [sys.executable, "-m", "tpu_serving_tools.bench", "pathwaysjob-interactive-v5e16", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pulumi/pulumi_gcp/pulumi_kubernetes modules" in proc.stdout
    assert "ratio:" in proc.stdout
