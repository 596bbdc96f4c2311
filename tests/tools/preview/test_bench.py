"""The preview benchmark runs and its figures hold together (slow: it spawns previews)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_bench_measures_preview_and_import():
    proc = subprocess.run(
        [sys.executable, "-m", "tpu_serving_tools.preview.bench", "pathwaysjob-interactive-v5e16", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    modules = int(re.search(r"(\d+) pulumi/pulumi_gcp/pulumi_kubernetes modules", proc.stdout)[1])
    imported = float(re.search(r"import only: median ([\d.]+) s", proc.stdout)[1])
    preview = float(re.search(r"preview: +median ([\d.]+) s", proc.stdout)[1])
    ratio = float(re.search(r"ratio: +([\d.]+)", proc.stdout)[1])
    assert modules > 100  # a preview imports the providers' SDKs, hundreds of modules
    assert imported > 0 and preview > 0
    assert abs(ratio - preview / imported) <= 0.01 + 0.005 * ratio  # printed rounded to 2 places
