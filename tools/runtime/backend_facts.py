"""Each serving backend's runtime facts: the roles of its pods, the ports they listen on, the flows between
them, the Service its clients call and how its containers use buckets.

They live beside the backend, in ``components/backends/<engine>/runtime_facts.json``, so a backend is one
folder; but they are data the runtime model reads as files, each entry with its upstream source. The
library's code never reads them (``tests/tools/runtime/test_runtime_facts_agree.py`` checks that, and compares them with
the library's own facts), so the model stays independent evidence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpu_serving_policy.rules import backend_folders
from tpu_serving_tools.runtime import sourced

FACTS_FILE = "runtime_facts.json"
ACCESS = ("read", "read/write")


@dataclass(frozen=True)
class FactFlow:
    """A flow between two pod roles that the objects do not spell out."""

    src_role: str
    dst_role: str
    port: int
    source: str


@dataclass(frozen=True)
class BucketUse:
    """How a container uses a gs:// location, and the access that use needs."""

    kind: str
    """``arg`` (``--flag=`` or ``key=`` prefix), ``env`` (variable name)."""
    key: str
    """The flag prefix or the variable name."""
    container: str
    """Container name it applies to, or ``*``."""
    access: str
    source: str


@dataclass(frozen=True)
class BackendFacts:
    """One backend's runtime facts."""

    backend: str
    """Its ``serving.backend`` value."""
    roles: Mapping[str, str]
    ports: Mapping[str, int]
    service: str | None
    flows: tuple[FactFlow, ...]
    bucket_uses: tuple[BucketUse, ...]
    images: tuple[str, ...] = ()
    """Image names (registry paths, no tag) its pods run: in a plan that records no settings (a library program),
    its flows apply only between pods that run one of them."""


def _sourced(entry: Any, where: str) -> Any:
    if not sourced.is_sourced(entry):
        raise ValueError(f"{where}: needs a value and its source")
    return entry["value"]


def parse(doc: Mapping[str, Any], where: str) -> BackendFacts:
    """One ``runtime_facts.json``; every entry must carry its source."""
    roles = {k: str(_sourced(v, f"{where} roles.{k}")) for k, v in doc.get("roles", {}).items()}
    ports = {k: int(_sourced(v, f"{where} ports.{k}")) for k, v in doc.get("ports", {}).items()}
    service = str(_sourced(doc["service"], f"{where} service")) if "service" in doc else None
    flows = []
    for i, f in enumerate(doc.get("flows", [])):
        at = f"{where} flows[{i}]"
        if f.get("port") not in ports or not str(f.get("source", "")).strip():
            raise ValueError(f"{at}: needs a port of `ports` ({', '.join(ports) or 'none'}) and a source")
        src, dst = (roles.get(f.get(end), "") for end in ("from", "to"))
        if not src or not dst:
            raise ValueError(f"{at}: `from` and `to` must be roles ({', '.join(roles) or 'none'})")
        flows.append(FactFlow(src, dst, ports[f["port"]], f["source"]))
    uses = []
    for i, u in enumerate(doc.get("bucket_uses", [])):
        at = f"{where} bucket_uses[{i}]"
        if u.get("kind") not in ("arg", "env") or u.get("access") not in ACCESS or not str(u.get("source", "")).strip():
            raise ValueError(f"{at}: kind arg|env, access {'|'.join(ACCESS)} and a source")
        uses.append(BucketUse(u["kind"], u["key"], u["container"], u["access"], u["source"]))
    images = tuple(str(i) for i in _sourced(doc["images"], f"{where} images")) if "images" in doc else ()
    return BackendFacts(str(doc["backend"]), roles, ports, service, tuple(flows), tuple(uses), images)


def load(backends: Path | None = None) -> dict[str, BackendFacts]:
    """Every backend's runtime facts, by ``serving.backend``; a backend package without its file is an error."""
    found: dict[str, BackendFacts] = {}
    for folder in sorted(p for p in (backends or backend_folders()).iterdir() if (p / "__init__.py").is_file()):
        path = folder / FACTS_FILE
        if not path.is_file():
            raise RuntimeError(f"backend {folder.name} has no {FACTS_FILE}")
        facts = parse(json.loads(path.read_text()), str(path))
        found[facts.backend] = facts
    return found


BACKENDS: dict[str, BackendFacts] = load()

FACT_FLOWS: tuple[FactFlow, ...] = tuple(f for b in BACKENDS.values() for f in b.flows)
"""Flows between roles; a flow applies wherever the plan has pods of both roles in one namespace."""

BUCKET_USES: tuple[BucketUse, ...] = tuple(dict.fromkeys(u for b in BACKENDS.values() for u in b.bucket_uses))
"""How a gs:// location is used -> the access it needs (first match wins). Unmatched uses need read."""

SERVING_SERVICE: dict[str, str] = {name: b.service for name, b in BACKENDS.items() if b.service}
"""The Service clients of a backend call when ``serving.serviceName`` does not name another."""
