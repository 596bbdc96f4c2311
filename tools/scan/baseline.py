"""The reviewed baseline of accepted Checkov findings: each entry a check ID, a resource pattern and a reason.

A finding is accepted when an entry's ``check`` equals its check ID and its ``resource`` pattern
(:func:`fnmatch.fnmatchcase`) matches the finding's resource, as Checkov names it: ``Pod.<namespace>.<name>``
or ``<Kind>.<namespace>.<name>`` for a Kubernetes object (``Pod.serving.JobSet/sax-model-server/model``
for a pod template that :mod:`.pods` took out of a controller's object), ``<terraform type>.<name>`` for
a GCP resource (``google_container_cluster.vllm70b-cluster``). Anything else fails the scan; an entry that
matches nothing in any stack is stale and fails the test suite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import yaml

BASELINE_FILE = Path(__file__).with_name("baseline.yaml")


@dataclass(frozen=True)
class Finding:
    """One failed Checkov check on one resource of one stack."""

    stack: str
    check: str
    resource: str
    title: str


@dataclass(frozen=True)
class Entry:
    """An accepted finding: ``check`` on every resource matching ``resource``, for ``reason``."""

    check: str
    resource: str
    reason: str

    def matches(self, f: Finding) -> bool:
        return f.check == self.check and fnmatchcase(f.resource, self.resource)


class BaselineError(ValueError):
    """A baseline file that is not a list of entries with a check, a resource pattern and a reason."""


def load(path: Path = BASELINE_FILE) -> list[Entry]:
    """The entries of a baseline file (YAML: ``accepted: [{check, resource, reason}, ...]``)."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise BaselineError(f"{path}: {err}") from err
    items = doc.get("accepted") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise BaselineError(f"{path}: expected a mapping with a list `accepted`")
    entries, problems = [], []
    for i, item in enumerate(items):
        keys = ("check", "resource", "reason")
        if not isinstance(item, dict) or set(item) != set(keys) or not all(isinstance(item[k], str) for k in keys):
            problems.append(f"accepted[{i}]: needs exactly the text keys check, resource and reason, got {item!r}")
            continue
        if not item["reason"].strip():
            problems.append(f"accepted[{i}] ({item['check']} {item['resource']}): the reason is empty")
            continue
        entries.append(Entry(item["check"], item["resource"], " ".join(item["reason"].split())))
    if problems:
        raise BaselineError(f"{path}:\n  " + "\n  ".join(problems))
    return entries


def split(findings: Iterable[Finding], entries: Sequence[Entry]) -> tuple[list[Finding], list[Finding]]:
    """(accepted, refused) findings."""
    accepted: list[Finding] = []
    refused: list[Finding] = []
    for f in findings:
        (accepted if any(e.matches(f) for e in entries) else refused).append(f)
    return accepted, refused


def stale(findings: Iterable[Finding], entries: Sequence[Entry]) -> list[Entry]:
    """Entries that match none of ``findings``."""
    seen = list(findings)
    return [e for e in entries if not any(e.matches(f) for f in seen)]
