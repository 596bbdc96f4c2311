"""One program's settings at one release, as extracted from its published artefact."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

TABLES = Path(__file__).resolve().parent / "tables"


@dataclass(frozen=True)
class Table:
    """The flags, environment variables and config keys a program reads, at one release."""

    program: str
    version: str
    source: dict[str, str]
    """Where the table was extracted from: artefact, its sha256, the files read, and when."""
    flags: frozenset[str]
    env: frozenset[str]
    config_keys: frozenset[str]
    types: Mapping[str, str] = field(default_factory=dict)
    """Config key -> the type its value must parse as (for programs that type their settings by a default)."""
    choices: Mapping[str, list[str]] = field(default_factory=dict)
    """Config key or flag -> the values the program accepts, where it enumerates them."""
    facts: Mapping[str, str] = field(default_factory=dict)
    """Further facts of the release a check needs, each keyed by what it is about."""
    metrics: Mapping[str, str] = field(default_factory=dict)
    """Prometheus metric name -> its kind (``gauge``, ``counter``, ``histogram``), for programs whose metrics an HPA
    or an alert reads."""


def load(name: str) -> Table:
    """The table ``tables/<name>.json``."""
    doc = json.loads((TABLES / f"{name}.json").read_text())
    return Table(
        program=str(doc["program"]),
        version=str(doc["version"]),
        source={str(k): str(v) for k, v in doc["source"].items()},
        flags=frozenset(doc.get("flags", ())),
        env=frozenset(doc.get("env", ())),
        config_keys=frozenset(doc.get("config_keys", ())),
        types={str(k): str(v) for k, v in doc.get("types", {}).items()},
        choices={str(k): [str(x) for x in v] for k, v in doc.get("choices", {}).items()},
        facts={str(k): str(v) for k, v in doc.get("facts", {}).items()},
        metrics={str(k): str(v) for k, v in doc.get("metrics", {}).items()},
    )


def dump(table: Table) -> str:
    """The JSON of ``table``, sorted, as the extraction scripts write it."""
    doc: dict[str, object] = {
        "program": table.program,
        "version": table.version,
        "source": table.source,
        "flags": sorted(table.flags),
        "env": sorted(table.env),
        "config_keys": sorted(table.config_keys),
    }
    for name, part in (
        ("types", table.types),
        ("choices", table.choices),
        ("facts", table.facts),
        ("metrics", table.metrics),
    ):
        if part:
            doc[name] = dict(sorted(part.items()))
    return json.dumps(doc, indent=1) + "\n"


def save(table: Table) -> str:
    """Write ``tables/<program>-<version>.json`` and say what it holds (the extraction scripts' last step)."""
    path = TABLES / f"{table.program}-{table.version}.json"
    path.write_text(dump(table))
    metrics = f", {len(table.metrics)} metrics" if table.metrics else ""
    return (
        f"wrote {path}: {len(table.flags)} flags, {len(table.env)} env, {len(table.config_keys)} config names{metrics}"
    )
