"""The policy exceptions: each serving backend's, and the shared components', read as files.

Each serving backend's package (``components/backends/<backend>/``) holds the exceptions it needs in
``policy_allowlist.json``, and ``components/policy_allowlist.json`` those of the components every backend
shares (the gateway's endpoint picker): a list of ``{"kind", "name", "finding", "why"}``. Nothing here
imports Pulumi or the library.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ALLOWLIST_FILE = "policy_allowlist.json"
"""Each serving backend's package (``components/backends/<backend>/``) holds the policy exceptions it
needs in this file: a list of ``{"kind", "name", "finding", "why"}``."""


def backend_folders() -> Path:
    """``components/backends`` of this checkout, or of the installed library when this pack is installed.

    The policy pack runs in its own virtualenv without the library (pulumi-policy pins protobuf and
    grpcio differently), so the allowlists are read as files, never imported.
    """
    here = Path(__file__).resolve().parent.parent / "components" / "backends"
    if here.is_dir():
        return here
    spec = importlib.util.find_spec("tpu_serving")  # locates the package without importing it
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "backends").is_dir():
            return Path(location) / "backends"
    raise RuntimeError(f"no serving backends found next to {Path(__file__).resolve().parent} nor installed")


def load_allowlist(backends: Path | None = None) -> dict[tuple[str, str, str], str]:
    """Every backend's allowlist entries, as (kind, object name or *, finding) -> why it is allowed."""
    root = backends or backend_folders()
    folders = sorted(p for p in root.iterdir() if (p / "__init__.py").is_file())
    allowed: dict[tuple[str, str, str], str] = {}
    for folder in folders:
        path = folder / ALLOWLIST_FILE
        if not path.is_file():
            raise RuntimeError(f"backend {folder.name} has no {ALLOWLIST_FILE}")
        for entry in json.loads(path.read_text()):
            key = (str(entry["kind"]), str(entry["name"]), str(entry["finding"]))
            if key in allowed or not str(entry.get("why", "")).strip():
                raise RuntimeError(f"{path}: {key} is listed twice or has no reason")
            allowed[key] = f"{entry['why']} ({folder.name})"
    shared = root.parent / ALLOWLIST_FILE
    for entry in json.loads(shared.read_text()) if shared.is_file() else []:
        key = (str(entry["kind"]), str(entry["name"]), str(entry["finding"]))
        if key in allowed or not str(entry.get("why", "")).strip():
            raise RuntimeError(f"{shared}: {key} is listed twice or has no reason")
        allowed[key] = f"{entry['why']} (components)"
    return allowed


ALLOWLIST: dict[tuple[str, str, str], str] = load_allowlist()
"""(kind, object name or *, finding) -> why it is allowed, from every backend's ``policy_allowlist.json``.
Findings: ``hostNetwork``, ``privileged:<container>``, ``capability:<container>:<CAP>``,
``serviceAccountToken:<container>``, ``memoryLimit:<container>``."""


def allowed(kind: str, name: str, finding: str) -> bool:
    """Whether ``finding`` on the object ``kind``/``name`` is allowlisted (for that name, or for any)."""
    return (kind, name, finding) in ALLOWLIST or (kind, "*", finding) in ALLOWLIST
