"""The lint gate: ruff (lint and format) over the tree, and mypy strict over the library, the tools
and the policy rules, report nothing.

The same commands as ``make lint``, run from the repository root with the settings in
pyproject.toml (mypy keeps its cache in .mypy_cache, so a rerun takes about a second).
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_lint_ruff_check():
    result = run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_ruff_format():
    result = run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_mypy_strict():
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
