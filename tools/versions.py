"""The version set (``tpu_serving.versions``), and what the preview says of a plan's pins.

Prints every pin: its version, release date, the newest release known to the table, whether it is behind,
upstream's status, and what it must agree with. ``--stale`` prints only the pins behind the newest known.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from tpu_serving.versions import PINS, Pin
from tpu_serving_tools.cli import command_parser

USED_AS: dict[str, str] = {
    "lws": "kubernetes-sigs/lws/releases/download/{v}/",
    "jobset": "kubernetes-sigs/jobset/releases/download/{v}/",
    "pathways-job": "google/pathways-job/releases/download/{v}/",
    "metrics-adapter": "cm-sd-adapter-{v}/",
    "pathways": "{v}",
    "pathways-jetstream": "{v}",
}
"""How a plan shows it uses a pin that is not an image reference: the controller's release manifest URL,
the Pathways release (an image tag and ``spec.pathwaysVersion``). Images are found as themselves."""


def used_pins(plan_text: str) -> list[Pin]:
    """The pins a plan (its JSON text) uses; never the e2e toolchain's (a Go module's), which no plan deploys."""
    used = []
    for pin in PINS.values():
        if pin.module:
            continue
        mark = USED_AS.get(pin.key, "{value}").format(v=pin.value, value=pin.value)
        if mark in plan_text:
            used.append(pin)
    return used


def plan_notes(resources: Sequence[Any]) -> list[str]:
    """The preview's lines on the plan's pins: behind the newest release known, or archived/unmaintained."""
    text = json.dumps([r.inputs for r in resources])
    lines = []
    for pin in used_pins(text):
        if not pin.current and pin.held:
            lines.append(f"{pin.key} {pin.version}: {pin.newest} is known, held: {pin.held}")
        elif not pin.current:
            lines.append(
                f"{pin.key} {pin.version} is behind the newest release known, {pin.newest} (tpu-serving versions)"
            )
        if pin.status:
            lines.append(f"{pin.key}: {pin.status}")
    return lines


def table(pins: Sequence[Pin], sources: bool = False) -> str:
    key = max([len("pin"), *(len(p.key) for p in pins)])
    version = max([len("version"), *(len(p.version) for p in pins)])
    newest = max([len("newest"), *(len(p.newest) + 2 for p in pins)])
    rows = [f"{'pin':{key}} {'version':{version}} {'released':11} {'newest':{newest}} what it must agree with / status"]
    for p in pins:
        note = "; ".join(x for x in (p.agrees_with, p.status, f"held: {p.held}" if p.held else "") if x)
        flag = "" if p.current else " *"
        rows.append(f"{p.key:{key}} {p.version:{version}} {p.released or '-':11} {p.newest + flag:{newest}} {note}")
        if sources:
            rows += [f"{'':{key}} pinned from: {p.source}", f"{'':{key}} newest as read: {p.newest_source}"]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--stale", action="store_true", help="only the pins behind the newest release known")
    parser.add_argument(
        "--sources", action="store_true", help="where each pin and its newest release were read, and when"
    )
    args = parser.parse_args(argv)
    pins = [p for p in PINS.values() if not (args.stale and p.current)]
    print(table(pins, sources=args.sources))
    print(
        "* behind the newest release known to the table (newest as read on the dates --sources gives; "
        "held: on purpose); sources: the package's tpu_serving/versions.py"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
