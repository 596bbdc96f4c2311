"""Runtime model check of every stack, or of the given stacks and plans.

Without arguments, previews every stack in-process (as ``make preview`` does) and asks of each
plan: would the pods be scheduled and admitted by the quota, would the network flows be allowed,
would each identity reach its buckets, are the prerequisites met, would the cloud APIs admit each
GCP resource? Then, over all the stacks together: does any resource the cloud allows once per scope
(an active proxy-only subnet per region and network, a service account ID per project...) appear
twice? Prints one summary line per stack and every failure with its reason; exits 1 if any fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance import category as engines
from tpu_serving_tools.runtime import (
    admission,
    coverage,
    identity,
    maintenance,
    network,
    objects,
    ports,
    prereqs,
    program_gaps,
    scheduling_check,
    scope,
    second_apply,
)
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult

CHECKS: tuple[Callable[[PlanView], CategoryResult], ...] = (
    objects.check,
    scheduling_check.check,
    network.check,
    ports.check,
    identity.check,
    prereqs.check,
    second_apply.check,
    admission.check,
    engines.check,
    maintenance.check,
    program_gaps.check,
)
"""Every category of the runtime model, in print order."""
ADVISORY: frozenset[str] = frozenset({maintenance.CATEGORY, program_gaps.CATEGORY})
"""Categories whose failures are warnings: printed, never failing the command (``--production``: the production gaps
of a program fail it too)."""

COUNTS: tuple[tuple[str, str, str], ...] = (
    ("objects", "object ", "controller objects created"),
    ("objects", "ref ", "references resolved"),
    ("objects", "maintenance page ", "maintenance pages true to their pools and gates"),
    ("objects", "cluster wiring ", "wired to the cluster's network, pool and project"),
    ("scheduling", "pod ", "pods scheduled"),
    ("scheduling", "quota ", "quota admits"),
    ("scheduling", "role ", "roles on whole slices"),
    ("scheduling", "scale ", "scale steps"),
    ("scheduling", "zone spread ", "zone spreads placed"),
    ("scheduling", "file cache ", "file caches fit"),
    ("network", "flow ", "flows allowed"),
    ("network", "excess ", "KV flows not opened the other way"),
    ("ports", "", "ports served"),
    ("identity", "", "identities with access"),
    ("prerequisites", "", "prerequisites met"),
    ("second apply", "", "cloud read-backs unchanged on a second up"),
    ("admission", "", "GCP resources admitted"),
    ("engines", "", "engine containers conform"),
)
"""(category, subject prefix, label) of each count on the summary line."""


def run_checks(view: PlanView) -> list[CategoryResult]:
    """Every category's result for one plan, then whether they examined anything at all (``coverage``)."""
    results = [check(view) for check in CHECKS]
    return [*results, coverage.check(view, results)]


def _count(result: CategoryResult, prefix: str) -> tuple[int, int]:
    chosen = [f for f in result.findings if f.subject.startswith(prefix)]
    return sum(f.ok for f in chosen), len(chosen)


def summary(label: str, results: list[CategoryResult], advisory: frozenset[str] = ADVISORY) -> list[str]:
    """The summary line and one indented line per failure (those of an ``advisory`` category as warnings)."""
    by_name = {r.category: r for r in results}
    parts = []
    for category, prefix, text in COUNTS:
        if category not in by_name:
            continue
        passed, total = _count(by_name[category], prefix)
        # only stacks that autoscale have a scale path, only those over zones a zone spread, only disaggregated ones roles, only some engines have tables,
        # only DisaggregatedSet and PathwaysJob stacks controller objects the model knows, only stacks with a gateway
        # or an HPA on the metrics adapter cluster wiring
        optional = (
            ("objects", "object "),
            ("objects", "ref "),
            ("objects", "cluster wiring "),
            ("scheduling", "role "),
            ("scheduling", "scale "),
            ("scheduling", "zone spread "),
            ("scheduling", "file cache "),
            ("network", "excess "),
            ("second apply", ""),
            ("engines", ""),
        )
        if total or (category, prefix) not in optional:
            parts.append(f"{text} {passed}/{total}")
    if maintenance.CATEGORY in by_name:
        parts.append(maintenance.summary_part(by_name[maintenance.CATEGORY]))
    gaps = by_name.get(program_gaps.CATEGORY)
    if gaps is not None and gaps.findings:  # a program's plan: a stack file's says its gaps in its preview
        parts.append(f"production rules broken {len(gaps.failures())} of {gaps.total}")
    lines = [f"{label}: {', '.join(parts)}"]
    for r in results:
        if r.category not in advisory:
            lines += [f"  [{r.category}] {f.subject}: {f.reason}" for f in r.failures()]
    return lines + [
        f"  warning [{r.category}] {f.subject}: {f.reason}"
        for r in results
        if r.category in advisory
        for f in r.failures()
    ]


def passed(results: Sequence[CategoryResult], advisory: frozenset[str] = ADVISORY) -> bool:
    """Whether the plan passes: every category but the ``advisory`` ones (whose failures are warnings)."""
    return all(r.ok for r in results if r.category not in advisory)


class PlanFileError(Exception):
    """A ``--plan`` file that cannot be read as a plan."""


def read_plan(path: Path) -> dict[str, Any]:
    """The plan in ``path`` (a ``plan.json`` written by ``tpu-serving preview``), or :class:`PlanFileError`."""
    hint = "pass the plan.json that `tpu-serving preview <stack>` writes (build/<stack>/plan.json)"
    try:
        text = path.read_text()
    except OSError as err:
        raise PlanFileError(f"cannot read plan {path}: {err.strerror or err}; {hint}") from None
    except UnicodeDecodeError:
        raise PlanFileError(f"plan {path} is not text; {hint}") from None
    try:
        plan = json.loads(text)
    except json.JSONDecodeError as err:
        raise PlanFileError(f"plan {path} is not JSON ({err.msg}, line {err.lineno}); {hint}") from None
    if not isinstance(plan, dict) or not isinstance(plan.get("resources"), list):
        raise PlanFileError(f"plan {path} holds no `resources` list, so it is no plan; {hint}")
    return plan


def _plans(args: argparse.Namespace) -> list[tuple[str, Mapping[str, Any]]] | None:
    plans: list[tuple[str, Mapping[str, Any]]] = []
    for p in args.plan:
        try:
            plan = read_plan(p)
        except PlanFileError as err:
            print(f"error: {err}", file=sys.stderr)
            return None
        plans.append((str(plan.get("stack") or p), plan))
    if args.plan and not args.stack:
        return plans
    from tpu_serving_tools.preview.offline import preview_stacks

    previewed = preview_stacks(args.root.resolve(), args.stack)
    if previewed is None:
        return None
    plans += previewed
    return plans


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--plan", type=Path, action="append", default=[], help="a plan.json to check")
    parser.add_argument("--stack", action="append", default=[], help="a stack to preview and check")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root holding Pulumi.yaml (default: .)")
    parser.add_argument(
        "--production",
        action="store_true",
        help="fail on a program's production gaps (what a stack file's production: true refuses), not only warn",
    )
    args = parser.parse_args(argv)
    plans = _plans(args)
    if plans is None:
        return 2
    ok = True
    advisory = ADVISORY - {program_gaps.CATEGORY} if args.production else ADVISORY
    for lines, passed in report(plans, advisory):
        print("\n".join(lines), flush=True)
        ok = ok and passed
    return 0 if ok else 1


def report(
    plans: Sequence[tuple[str, Mapping[str, Any]]], advisory: frozenset[str] = ADVISORY
) -> Iterator[tuple[list[str], bool]]:
    """What the command prints of ``plans`` (label, plan), a stack at a time, and whether it passed: each stack's
    summary and failures, then the line over all of them together (docs/check.md shows it: tools/docgen/check_page.py)."""
    for label, plan in plans:
        results = run_checks(PlanView(plan))
        yield summary(label, results, advisory), passed(results, advisory)
    shared = scope.check([(label, PlanView(plan)) for label, plan in plans])
    counted = f"one-per-scope resources unique and shared NATs found {shared.passed}/{shared.total}"
    failures = [f"  [scope] {f.subject}: {f.reason}" for f in shared.failures()]
    failures += [f"  note: {f.subject}: {f.reason}" for f in shared.findings if f.ok and f.reason == scope.MUST_EXIST]
    warnings = scope.reservation_findings([(label, PlanView(plan)) for label, plan in plans])[1]
    yield [f"across the {len(plans)} stack(s): {counted}", *failures, *warnings], shared.ok


if __name__ == "__main__":
    sys.exit(main())
