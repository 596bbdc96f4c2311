"""Offline policy check of every stack, or of the given stacks and plans.

Without arguments, previews every stack (as ``make preview`` does) and checks its plan.
Prints every violation; exits 1 if any is mandatory.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tpu_serving_policy.rules import RULES, Violation, evaluate, from_plan
from tpu_serving_tools.cli import command_parser


def report(label: str, violations: list[Violation]) -> bool:
    """Print a stack's violations; True when none is mandatory."""
    mandatory = [v for v in violations if v.enforcement == "mandatory"]
    print(f"{label}: {len(mandatory)} mandatory, {len(violations) - len(mandatory)} advisory violation(s)")
    for v in violations:
        print(f"  [{v.enforcement}] {v.rule}: {v.resource.rsplit('::', 1)[-1]}: {v.message}")
    return not mandatory


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--plan", type=Path, action="append", default=[], help="a plan.json to check")
    parser.add_argument("--stack", action="append", default=[], help="a stack to preview and check")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root holding Pulumi.yaml (default: .)")
    args = parser.parse_args(argv)
    from tpu_serving_tools.check import PlanFileError, read_plan

    plans: list[tuple[str, dict[str, Any]]] = []
    for p in args.plan:
        try:
            plans.append((str(p), read_plan(p)))
        except PlanFileError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    if not args.plan:
        from tpu_serving_tools.preview.offline import preview_stacks

        previewed = preview_stacks(args.root.resolve(), args.stack)
        if previewed is None:
            return 2
        plans += previewed
    ok = all([report(label, evaluate(from_plan(plan))) for label, plan in plans])
    print(f"{len(RULES)} rules over {len(plans)} plan(s): {'pass' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
