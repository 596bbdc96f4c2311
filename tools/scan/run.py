"""Checkov over every stack, against the reviewed baseline.

For each stack, previews the program in-process (as ``tpu-serving preview`` does) and writes under
``build/<stack>/scan/``: ``kubernetes.yaml``, the stack's Kubernetes objects plus a Pod for each pod
template inside a LeaderWorkerSet, JobSet or PathwaysJob (:mod:`.pods`); and ``terraform-plan.json``,
its GCP resources as a Terraform plan (:mod:`.tfplan`). Checkov (``--framework kubernetes
terraform_plan``) reads both. Each failed check is accepted only by an entry of the baseline
(:mod:`.baseline`); prints one line per stack and every refused finding, and exits 1 if any is refused
(or, with ``--stale-fails``, if a baseline entry matched nothing), 2 if a stack or Checkov cannot run.

The controllers' own installs (LWS, JobSet, PathwaysJob release manifests) are upstream's and expanded
by the provider at deploy time: they are not in the plan and are not scanned.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.preview.offline import OPAQUE_KUBERNETES_TYPES
from tpu_serving_tools.scan import baseline as bl
from tpu_serving_tools.scan.pods import extracted_pods
from tpu_serving_tools.scan.tfplan import UnknownResourceType, terraform_plan

FRAMEWORKS = ("kubernetes", "terraform_plan")

CHECKOV = "3.3.30"
"""The Checkov release the scan and its baseline are pinned to: requirements-scan.txt and constraints-scan.txt pin
the same (tests/tools/scan/test_scan.py), and the message for a program of its own names it."""


@dataclass(frozen=True)
class Report:
    """What Checkov found in one stack: how many checks passed, and the failed ones."""

    stack: str
    passed: int
    findings: list[bl.Finding]


def kubernetes_documents(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The plan's Kubernetes objects, then a Pod per pod template inside the controllers' objects."""
    objects = [
        dict(r["inputs"])
        for r in plan["resources"]
        if r.get("custom")
        and str(r["type"]).startswith("kubernetes:")
        and r["type"] not in OPAQUE_KUBERNETES_TYPES
        and not str(r["type"]).startswith("pulumi:providers:")
    ]
    return objects + extracted_pods(objects)


def write_inputs(stack: str, plan: Mapping[str, Any], out: Path) -> tuple[Path, Path]:
    """``kubernetes.yaml`` and ``terraform-plan.json`` of one stack, under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    k8s_path, tf_path = out / "kubernetes.yaml", out / "terraform-plan.json"
    docs = kubernetes_documents(plan)
    k8s_path.write_text(f"# {stack}: Kubernetes objects and extracted pod templates\n" + yaml.safe_dump_all(docs))
    tf_path.write_text(json.dumps(terraform_plan(plan), indent=1) + "\n")
    return k8s_path, tf_path


def find_checkov(given: str | None, root: Path) -> str | None:
    """``--checkov``, else ``$CHECKOV``, else ``checkov`` on the PATH, else ``<root>/.scan-venv/bin/checkov``."""
    for candidate in (given, os.environ.get("CHECKOV"), shutil.which("checkov"), str(root / ".scan-venv/bin/checkov")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def run_checkov(checkov: str, files: Sequence[Path]) -> list[dict[str, Any]]:
    """Checkov's JSON reports over ``files`` (one per framework with results)."""
    cmd = [checkov, "--framework", *FRAMEWORKS, "--compact", "--skip-download", "-o", "json"]
    for f in files:
        cmd += ["-f", str(f)]
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError as err:
        raise RuntimeError(f"checkov exited {done.returncode} without a JSON report: {done.stderr[-2000:]}") from err
    return out if isinstance(out, list) else [out]


def reports(raw: list[dict[str, Any]], files: Mapping[Path, str]) -> dict[str, Report]:
    """Per stack: passed and failed checks, attributed by the scanned file."""
    by_stack: dict[str, Report] = {s: Report(s, 0, []) for s in files.values()}
    for report in raw:
        if report.get("check_type") not in FRAMEWORKS:
            continue
        results = report.get("results", {})
        for outcome in ("passed_checks", "failed_checks"):
            for r in results.get(outcome, []):
                stack = files[Path(r["file_abs_path"]).resolve()]
                old = by_stack[stack]
                finding = bl.Finding(stack, r["check_id"], r["resource"], r["check_name"])
                by_stack[stack] = Report(
                    stack,
                    old.passed + (outcome == "passed_checks"),
                    old.findings + ([finding] if outcome == "failed_checks" else []),
                )
    return by_stack


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--stack", action="append", default=[], help="a stack to scan (default: every stack)")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root holding Pulumi.yaml (default: .)")
    parser.add_argument("--checkov", help="the checkov executable (default: $CHECKOV, the PATH, .scan-venv)")
    parser.add_argument("--baseline", type=Path, default=bl.BASELINE_FILE, help="the accepted findings (YAML)")
    parser.add_argument("--stale-fails", action="store_true", help="fail when a baseline entry matches nothing")
    parser.add_argument("--readme", type=Path, help="write the per-stack results into this file's scan-results block")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    checkov = find_checkov(args.checkov, root)
    if checkov is None:
        print(
            f"error: checkov not found: pass --checkov, set $CHECKOV, or run `make scan` (.scan-venv); a program of "
            f"its own: `python3 -m venv .scan-venv && .scan-venv/bin/pip install checkov=={CHECKOV}` (the pinned "
            "release, whose baseline tools/scan/baseline.yaml holds), then --checkov .scan-venv/bin/checkov",
            file=sys.stderr,
        )
        return 2
    try:
        entries = bl.load(args.baseline)
    except bl.BaselineError as err:
        print(f"error: baseline {err}", file=sys.stderr)
        return 2
    from tpu_serving_tools.preview.offline import preview_stacks

    plans = preview_stacks(root, args.stack)
    if plans is None:
        return 2
    files: dict[Path, str] = {}
    for stack, plan in plans:
        try:
            for path in write_inputs(stack, plan, root / "build" / stack / "scan"):
                files[path.resolve()] = stack
        except UnknownResourceType as err:
            print(f"error: {stack}: {err}", file=sys.stderr)
            return 2
    try:
        found = reports(run_checkov(checkov, list(files)), files)
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.readme:
        write_readme(args.readme, found, entries)
    print(f"baseline: {args.baseline} ({len(entries)} entries)")
    return verdict(found, entries, stale_fails=args.stale_fails)


BEGIN, END = "<!-- scan-results:begin -->", "<!-- scan-results:end -->"


def results_table(found: Mapping[str, Report], entries: Sequence[bl.Entry]) -> str:
    """The per-stack results as a Markdown table: checks passed, findings baselined (by check), refused."""
    rows = [
        "| stack | checks passed | failed, baselined | failed outside the baseline |",
        "|---|---|---|---|",
    ]
    for stack, report in sorted(found.items()):
        accepted, refused = bl.split(report.findings, entries)
        checks = sorted({f.check for f in accepted}, key=lambda c: (c.split("_")[1], int(c.rsplit("_", 1)[1])))
        total = report.passed + len(report.findings)
        rows.append(f"| {stack} | {report.passed}/{total} | {len(accepted)} ({', '.join(checks)}) | {len(refused)} |")
    return "\n".join(rows)


def write_readme(path: Path, found: Mapping[str, Report], entries: Sequence[bl.Entry]) -> None:
    """Replace the block between the scan-results markers of ``path`` with :func:`results_table`."""
    text = path.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    if BEGIN not in text or END not in rest:
        raise ValueError(f"{path}: no {BEGIN} ... {END} block")
    version = f"Checkov {CHECKOV} (requirements-scan.txt)"
    path.write_text(f"{head}{BEGIN}\n{version}, `make scan`:\n\n{results_table(found, entries)}\n{END}{tail}")


def verdict(found: Mapping[str, Report], entries: Sequence[bl.Entry], *, stale_fails: bool) -> int:
    """Print the per-stack lines, refused findings and stale entries; the exit status."""
    ok = True
    every: list[bl.Finding] = []
    for stack, report in found.items():
        accepted, refused = bl.split(report.findings, entries)
        every += report.findings
        total = report.passed + len(report.findings)
        print(
            f"{stack}: {report.passed}/{total} checks passed, {len(accepted)} failed and baselined, "
            f"{len(refused)} failed outside the baseline"
        )
        if total == 0:
            print(f"  nothing was scanned in {stack}")
            ok = False
        for f in refused:
            print(f"  {f.check} {f.resource}: {f.title}")
        ok = ok and not refused
    stale = bl.stale(every, entries)
    if stale and stale_fails:
        print("\n".join(f"error: baseline entry matched nothing: {e.check} {e.resource}" for e in stale))
        ok = False
    elif stale:
        print(f"note: {len(stale)} baseline entries matched nothing here (--stale-fails lists them)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
