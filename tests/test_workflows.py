"""The GitHub Actions workflows pass actionlint and zizmor, and keep their safety properties."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        found = shutil.which(name)
        assert found, f"{name} is not installed (requirements-dev.txt)"
        return found
    return str(path)


def test_workflows_exist():
    assert [w.name for w in WORKFLOWS] == ["ci.yml", "preview.yml"]


def test_workflows_pass_actionlint():
    proc = subprocess.run([tool("actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflows_pass_zizmor_auditor():
    proc = subprocess.run(
        [tool("zizmor"), "--offline", "--persona=auditor", str(ROOT / ".github" / "workflows")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr


def test_workflows_zizmor_catches_an_unsafe_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    proc = subprocess.run([tool("zizmor"), "--offline", str(bad)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "template-injection" in proc.stdout + proc.stderr


def load(name: str) -> dict:
    return yaml.load((ROOT / ".github" / "workflows" / name).read_text(), Loader=yaml.BaseLoader)


def test_workflows_ci_runs_lint_test_slow_tests_scan_docs_and_e2e_as_steps():
    ci = load("ci.yml")
    assert set(ci["on"]) == {"push", "pull_request"}
    steps = [s.get("run", "") for s in ci["jobs"]["test"]["steps"]]
    runs = ["make " + r.split("make ", 1)[1] for r in steps if r.startswith(("make ", "sudo --preserve-env="))]
    assert runs[0] == "make reference"  # a fork's code without the reference repository only (the next test)
    runs = runs[1:]
    assert runs == [
        "make reference-check",
        "make lint",
        "make test",
        "make test-slow",
        "make scan",
        "make docs",
        "make e2e-tools",
        "make e2e",
    ]
    local = (ROOT / ".ci" / "run").read_text()
    assert [line.split("&& ")[-1] for line in local.splitlines() if "&& make " in line] == runs
    assert "set -euo pipefail" in local


def test_workflows_preview_is_least_privilege_and_concurrent():
    pr = load("preview.yml")
    assert pr["permissions"] == {} and "concurrency" in pr
    jobs = pr["jobs"]
    assert jobs["offline-diff"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "id-token" not in jobs["offline-diff"]["permissions"]
    real = jobs["pulumi-preview"]
    assert real["permissions"]["id-token"] == "write" and real["environment"] == "pulumi-preview"
    assert real["if"] == "vars.GCP_WORKLOAD_IDENTITY_PROVIDER != ''"
    assert any("tools.diff" in s.get("run", "") for s in jobs["offline-diff"]["steps"])
    for job in jobs.values():
        for step in job["steps"]:
            if "uses" in step:
                ref = step["uses"].split("@", 1)[1]
                assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step["uses"]


def test_workflows_ci_compares_goldens_with_main():
    """The golden-change test needs the base branch: a full-history checkout and GOLDEN_BASE=origin/main."""
    ci = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    steps = ci["jobs"]["test"]["steps"]
    own = next(s for s in steps if s.get("with", {}).get("path") == "tpu-serving")
    assert own["with"]["fetch-depth"] == 0
    test = next(s for s in steps if s.get("run") == "make test")
    assert test["env"]["GOLDEN_BASE"] == "origin/main"


def test_workflows_ci_goes_without_the_seeds_only_for_a_forks_code(tmp_path: Path):
    """New-user review 11, M4: a fork cannot have the seeds' manifests, and its CI could never go green. CI's step
    (run here as bash) requires the reference repository on the project's own runs, and only a fork's code without
    it goes without the seeds (WITHOUT_SEEDS, a warning) after make reference fetches the published files. The
    local CI script never sets it."""
    ci = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    steps = ci["jobs"]["test"]["steps"]
    (gate,) = [s for s in steps if "TPU_SERVING_WITHOUT_SEEDS" in str(s.get("run"))]
    assert gate["env"]["REFERENCE"] == "${{ vars.TPU_SERVING_REFERENCE_REPOSITORY }}"
    assert "github.event.pull_request.head.repo.fork" in gate["env"]["FORK"]

    def run(reference: str, fork: str) -> tuple[int, str, str]:
        github_env = tmp_path / f"env-{bool(reference)}-{fork}"
        github_env.write_text("")
        env = {"PATH": "/usr/bin:/bin", "REFERENCE": reference, "FORK": fork, "GITHUB_ENV": str(github_env)}
        done = subprocess.run(["bash", "-e", "-c", gate["run"]], env=env, capture_output=True, text=True)
        return done.returncode, done.stdout, github_env.read_text()

    assert run("owner/reference", "false") == (0, "", "")
    assert run("owner/reference", "true") == (0, "", "")
    rc, out, written = run("", "true")
    assert rc == 0 and out.startswith("::warning::") and written == "TPU_SERVING_WITHOUT_SEEDS=1\n"
    rc, out, written = run("", "false")
    assert rc == 1 and out.startswith("::error::set the repository variable") and written == ""
    checkout = next(s for s in steps if s.get("with", {}).get("path") == "shared")
    fetch = next(s for s in steps if s.get("run") == "make reference")
    assert checkout["if"] == "vars.TPU_SERVING_REFERENCE_REPOSITORY != ''"
    assert fetch["if"] == "vars.TPU_SERVING_REFERENCE_REPOSITORY == ''"
    assert steps.index(fetch) < steps.index(next(s for s in steps if s.get("run") == "make reference-check"))
    assert "WITHOUT_SEEDS" not in (ROOT / ".ci" / "run").read_text()
