"""The version set (``tpu_serving.catalog.versions``), and what the preview says of a plan's pins.

Prints every pin, one row each that fits 100 columns: its version, release date, the newest release known to the
table (``*``: behind) and, in short, where it was pinned from. ``--verbose`` adds under each row, wrapped, what it
must agree with, upstream's status, why it is held and both sources whole. ``--stale`` prints only the pins behind
the newest known.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from tpu_serving.catalog.versions import PINS, Pin
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
the Pathways release (an image tag and ``spec.pathwaysVersion``). Images are found by their path and tag after the
registry host, so an image pulled through a mirror (tpu_serving.platform.image_mirror keeps the upstream's path) counts too."""


def used_pins(plan_text: str) -> list[Pin]:
    """The pins a plan (its JSON text) uses; never the e2e toolchain's (a Go module's), which no plan deploys."""
    used = []
    for pin in PINS.values():
        if pin.module:
            continue
        image_path = "/" + pin.value.split("/", 1)[1] if "/" in pin.value else pin.value
        mark = USED_AS.get(pin.key, "{value}").format(v=pin.value, value=image_path)
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


WIDTH = 100
"""The columns ``tpu-serving versions`` fits its lines to: a terminal of 100 columns shows each whole."""

FOOTER = "* behind the newest known; --verbose: why held, agreements, sources (tpu_serving/versions.py)"
"""The last line: what the star means and where the rest is (the package's module, which a pip user has too)."""


def short(text: str, width: int) -> str:
    """``text`` up to its first clause (before ``:``, ``;`` or `` (``), cut to ``width`` characters with ``…``."""
    head = re.split(r": |; | \(", text, maxsplit=1)[0]
    return head if len(head) <= width else head[: max(width - 1, 0)] + "…"


def _wrapped(label: str, text: str, indent: str) -> list[str]:
    """``label: text`` wrapped to :data:`WIDTH`; a word longer than that (a URL) stays whole, on a line of its own."""
    return textwrap.wrap(
        f"{label}: {text}",
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    )


def table(pins: Sequence[Pin], verbose: bool = False) -> str:
    """One row a pin, each at most :data:`WIDTH` long: pin, version, release date, the newest known (``*`` when
    behind) and where it was pinned from, in short; ``verbose`` adds under each row, wrapped, what it must agree
    with, upstream's status, why it is held, and both sources whole."""
    key = max([len("pin"), *(len(p.key) for p in pins)])
    version = max([len("version"), *(len(p.version) for p in pins if len(p.version) <= 12)])
    newest = max([len("newest"), *(len(p.newest) + 2 for p in pins if len(p.newest) <= 12)])
    rows = [f"{'pin':{key}} {'version':{version}} {'released':10} {'newest':{newest}} pinned from"]
    for p in pins:
        flag = "" if p.current else " *"
        row = f"{p.key:{key}} {p.version:{version}} {p.released or '-':10} {p.newest + flag:{newest}} "
        rows.append(row + short(p.source, WIDTH - len(row)))
        if verbose:
            notes = (
                ("must agree with", p.agrees_with),
                ("status", p.status),
                ("held", p.held),
                ("pinned from", p.source),
                ("newest as read", p.newest_source),
            )
            rows += [line for label, text in notes if text for line in _wrapped(label, text, "  ")]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--stale", action="store_true", help="only the pins behind the newest release known")
    parser.add_argument(
        "--verbose",
        "--sources",
        action="store_true",
        help="under each pin, wrapped: what it must agree with, upstream's status, why it is held, and where it "
        "and its newest release were read, and when",
    )
    args = parser.parse_args(argv)
    pins = [p for p in PINS.values() if not (args.stale and p.current)]
    print(table(pins, verbose=args.verbose))
    print(FOOTER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
