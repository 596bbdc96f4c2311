"""Extract the Pathways flags and environment as upstream passes them: ``python -m
tpu_serving_tools.conformance.extract_pathways --git-dir DIR --seeds DIR`` (a git directory of google/pathways-job,
and the seeds' manifests folder).

The Pathways server and proxy binaries are closed source, so no release lists their flags. What upstream passes is
the evidence: the PathwaysJob controller at its pinned release (``internal/controller/pathwaysjob_controller.go``:
``MakeResourceManagerContainer``, ``MakeProxyContainer``, ``MakeWorkerJob``, the ``--name=`` arguments and the
``Name: "VAR"`` environment each one builds), and the seeds' manifests for the same containers (the GKE JetStream +
Pathways tutorials). A flag neither passes is not known to exist.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance.table import Table, save

RELEASE = "v0.1.4"
"""google/pathways-job release the stacks install (the PathwaysJob controller)."""
CONTROLLER = "internal/controller/pathwaysjob_controller.go"
ROLES: Mapping[str, str] = {
    "pathways-rm": "MakeResourceManagerContainer",
    "pathways-proxy": "MakeProxyContainer",
    "pathways-worker": "MakeWorkerJob",
}
"""Table name -> the controller function that builds that container."""
SEED_CONTAINERS: Mapping[str, str] = {
    "pathways-rm": "pathways-rm",
    "pathways-proxy": "pathways-proxy",
    "worker": "pathways-worker",
}
"""Container name in the seeds' LeaderWorkerSets -> table name (the seeds call the worker container ``worker``)."""

FLAG = re.compile(r'"--(\w+)=')
VERSION_MAP = re.compile(r"var MachineTypeToTPUVersionMap = map\[string\]string\{(.*?)\n\}", re.S)
PAIR = re.compile(r'"([\w-]+)":\s*"([\w-]+)"')
ENV = re.compile(r'\{Name: "([A-Z][A-Z0-9_]*)"')


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True).stdout


def function_body(go: str, name: str) -> str:
    return go.split(f"\nfunc {name}(", 1)[1].split("\nfunc ", 1)[0]


def _containers(node: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        containers = node.get("containers")
        yield from containers if isinstance(containers, list) else ()
        for child in node.values():
            yield from _containers(child)
    elif isinstance(node, list):
        for child in node:
            yield from _containers(child)


def from_seeds(seeds: Path) -> dict[str, tuple[set[str], set[str], set[str]]]:
    """Table name -> (flags, env, files) the seeds pass to that container."""
    out: dict[str, tuple[set[str], set[str], set[str]]] = {}
    for path in sorted(seeds.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            for c in _containers(doc):
                role = SEED_CONTAINERS.get(str(c.get("name")))
                if role is None or "/pathways/" not in str(c.get("image", "")):
                    continue
                flags, env, files = out.setdefault(role, (set(), set(), set()))
                flags |= {str(a).split("=", 1)[0] for a in c.get("args") or () if str(a).startswith("--")}
                env |= {str(e["name"]) for e in c.get("env") or ()}
                files.add(path.name)
    return out


def instance_types(go: str) -> dict[str, str]:
    """``instance_type:<machine type>`` -> the TPU version the controller passes in ``--instance_type=<version>:<topology>``
    (``MachineTypeToTPUVersionMap``, used by ``constructTPUVersionFromMachineType``)."""
    found = VERSION_MAP.search(go)
    if found is None:
        raise SystemExit(f"MachineTypeToTPUVersionMap not found in {CONTROLLER} at {RELEASE}")
    return {f"instance_type:{machine}": version for machine, version in PAIR.findall(found.group(1))}


def tables(git_dir: Path, seeds: Path) -> list[Table]:
    go = _git(git_dir, "show", f"{RELEASE}:{CONTROLLER}")
    commit = _git(git_dir, "rev-list", "-n1", RELEASE).strip()
    seeded = from_seeds(seeds)
    out = []
    for role, function in ROLES.items():
        body = function_body(go, function)
        flags = {f"--{n}" for n in FLAG.findall(body)}
        env = set(ENV.findall(body))
        seed_flags, seed_env, files = seeded.get(role, (set(), set(), set()))
        source = {
            "artefact": f"google/pathways-job@{RELEASE} ({commit})",
            "files": f"{CONTROLLER} ({function}{', MachineTypeToTPUVersionMap' if role == 'pathways-rm' else ''}); seed manifests {', '.join(sorted(files)) or '(none)'}",
            "why": "the Pathways binaries are closed source: the flags and variables upstream passes are the evidence",
            "extracted": datetime.date.today().isoformat(),
            "by": "tools/conformance/extract_pathways.py",
        }
        facts = instance_types(go) if role == "pathways-rm" else {}
        out.append(
            Table(
                role,
                RELEASE,
                source,
                frozenset(flags | seed_flags),
                frozenset(env | seed_env),
                frozenset(),
                facts=facts,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--git-dir", type=Path, required=True)
    parser.add_argument(
        "--seeds", type=Path, required=True, help="the seeds' manifests (../shared/reference/seed-manifests)"
    )
    args = parser.parse_args(argv)
    for t in tables(args.git_dir, args.seeds):
        print(save(t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
