"""tpu-serving policy pack for Pulumi CrossGuard: ``pulumi preview --policy-pack policy``.

Adapts the plain rules of ``rules.py`` (which ``make policy`` also runs offline over the
offline plans) to CrossGuard resource and stack validation policies.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pulumi_policy import (  # noqa: E402
    EnforcementLevel,
    PolicyPack,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

if TYPE_CHECKING:  # the pack runs as a script beside rules.py; mypy sees it as tpu_serving_policy
    from tpu_serving_policy.rules import RULES, Resource, Rule
else:
    from rules import RULES, Resource, Rule

ReportViolation = Callable[[str, "str | None"], None]

LEVELS = {"mandatory": EnforcementLevel.MANDATORY, "advisory": EnforcementLevel.ADVISORY}


def _resource(type_: str, props: Any, urn: str, name: str, opts: Any, dependencies: Iterable[str] = ()) -> Resource:
    return Resource(
        type=type_,
        name=name,
        inputs=dict(props or {}),
        urn=urn,
        protect=bool(getattr(opts, "protect", False)),
        dependencies=tuple(dependencies or ()),
    )


def resource_policy(rule: Rule) -> ResourceValidationPolicy:
    check = rule.check
    assert check is not None

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in check(_resource(args.resource_type, args.props, args.urn, args.name, args.opts)):
            report_violation(message, args.urn)

    return ResourceValidationPolicy(
        name=rule.name, description=rule.description, validate=validate, enforcement_level=LEVELS[rule.enforcement]
    )


def stack_policy(rule: Rule) -> StackValidationPolicy:
    stack_check = rule.stack_check
    assert stack_check is not None

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [
            _resource(r.resource_type, r.props, r.urn, r.name, r.opts, [d.urn for d in (r.dependencies or [])])
            for r in args.resources
        ]
        for message in stack_check(resources):
            report_violation(message, None)

    return StackValidationPolicy(
        name=rule.name, description=rule.description, validate=validate, enforcement_level=LEVELS[rule.enforcement]
    )


def policies() -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """One CrossGuard policy per rule."""
    return [resource_policy(r) if r.check is not None else stack_policy(r) for r in RULES]


PolicyPack(
    name="tpu-serving", description="Least privilege and safe defaults for tpu-serving stacks.", policies=policies()
)
