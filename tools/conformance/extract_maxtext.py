"""Extract MaxText's config keys from its source: ``python -m tpu_serving_tools.conformance.extract_maxtext
--git-dir DIR`` (a git directory of AI-Hypercomputer/maxtext).

The ``jax-tpu`` container runs the jetstream-pathways image, whose Dockerfile
(maxtext ``dependencies/dockerfiles/jetstream_pathways.Dockerfile``) clones MaxText at ``MAXTEXT_VERSION=main``:
the image's MaxText commit is not published. The seeds bound it. They pass ``MaxText/configs/base.yml`` (the layout
before MaxText moved to ``src/``) and ``inference_server=ExperimentalMaxtextDisaggregatedServer_8`` (a
``case`` of ``MaxText/maxengine_config.py``'s ``get_server_config`` that later releases renamed). The window is
every tag of the repository that satisfies both; the table keeps what holds at *all* of them:

- the top-level keys of ``MaxText/configs/base.yml`` with the YAML type of their default. ``pyconfig.py``
  refuses a command-line key that is not in the config (``Key {k} was passed at the command line but isn't in
  config``) and parses the value by the default's type (``_yaml_types_to_parser``: str, int, float, bool via
  ``string_to_bool``; any other type cannot be passed on the command line);
- the values ``validate_model_name`` and ``validate_compute_axis_order`` accept;
- the ``inference_server`` values ``get_server_config`` matches, and the slices each one hard-codes;
- the config files (``MaxText/configs/**.yml``, MaxText's first argument), under the choice ``config_file``.
  Command-line keys are checked against ``base.yml``, the root every config file's ``base_config`` chain ends in.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance.table import Table, save

BASE = "MaxText/configs/base.yml"
SERVER_CONFIG = "MaxText/maxengine_config.py"
PYCONFIG = "MaxText/pyconfig.py"
SEED_SERVER = "ExperimentalMaxtextDisaggregatedServer_8"
IMAGE = "jetstream-pathways-v0.2.0"
"""The table's version: the image tag whose MaxText it describes (us-docker.pkg.dev/cloud-tpu-images/inference/)."""

CASE = re.compile(r'^\s*case "(\w+)":', re.M)
SLICES = re.compile(r'(prefill|generate)_slices=\("([\w-]+)",\)')
QUOTED = re.compile(r'"([^"\n]*)"')


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True).stdout


def _show(git_dir: Path, tag: str, path: str) -> str | None:
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{tag}:{path}"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def type_name(value: Any) -> str:
    """The name pyconfig's parser table knows a default's type by (``null``, ``list``, ``dict`` otherwise)."""
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}[type(value)]


def window(git_dir: Path) -> list[str]:
    """The tags whose MaxText matches the seeds: the old layout, and the seed's disaggregated server."""
    tags = _git(git_dir, "tag").split()
    return sorted(
        t for t in tags if SEED_SERVER in (_show(git_dir, t, SERVER_CONFIG) or "") and _show(git_dir, t, BASE)
    )


VALIDATORS = {"model_name": "validate_model_name", "compute_axis_order": "validate_compute_axis_order"}
"""Config key -> the ``pyconfig.py`` function that refuses a value outside its ``valid_*`` tuple."""


def valid_values(pyconfig: str, function: str) -> set[str]:
    """The quoted values of ``function``'s ``valid_*`` tuple (its body up to the ``if s not in`` test)."""
    body = pyconfig.split(f"def {function}(", 1)[1].split("if s not in", 1)[0]
    return set(QUOTED.findall(body.split("=", 1)[1]))


def servers(server_config: str) -> dict[str, str]:
    """``inference_server`` value -> the slice kinds its disaggregated config hard-codes (``""`` if none)."""
    out = {}
    arms = re.split(r'^\s*case "', server_config, flags=re.M)[1:]
    for arm in arms:
        name = arm.split('"', 1)[0]
        out[name] = ",".join(sorted({s for _, s in SLICES.findall(arm)}))
    return out


@dataclass(frozen=True)
class _AtTag:
    """What one tag of MaxText holds: its config files, the types of base.yml's defaults, the values each validator
    accepts, and the ``inference_server`` values with their slices."""

    files: set[str]
    types: dict[str, str]
    choices: dict[str, set[str]]
    servers: dict[str, str]


def _at_tag(git_dir: Path, tag: str) -> _AtTag:
    """The MaxText facts of ``tag``."""
    listed = {
        f for f in _git(git_dir, "ls-tree", "-r", "--name-only", tag, "MaxText/configs").split() if f.endswith(".yml")
    }
    base = yaml.safe_load(_show(git_dir, tag, BASE) or "")
    pyconfig = _show(git_dir, tag, PYCONFIG) or ""
    return _AtTag(
        files=listed,
        types={str(k): type_name(v) for k, v in base.items()},
        choices={key: valid_values(pyconfig, function) for key, function in VALIDATORS.items()},
        servers=servers(_show(git_dir, tag, SERVER_CONFIG) or ""),
    )


def _common(found: list[_AtTag]) -> _AtTag:
    """What holds at every tag: the files, key types, choices and servers the first tag has and the others agree
    on (in the first tag's order)."""
    files, types, choices, known = found[0].files, found[0].types, dict(found[0].choices), found[0].servers
    for at in found[1:]:
        files = files & at.files
        types = {k: v for k, v in types.items() if at.types.get(k) == v}
        choices = {k: choices[k] & v for k, v in at.choices.items()}
        known = {k: v for k, v in known.items() if at.servers.get(k) == v}
    return _AtTag(files, types, choices, known)


def _source(git_dir: Path, tags: list[str]) -> dict[str, str]:
    """The table's provenance: the tags with their commits, why these, the files read, when and by what."""
    commits = ", ".join(f"{t} ({_git(git_dir, 'rev-list', '-n1', t).strip()[:12]})" for t in tags)
    return {
        "artefact": f"AI-Hypercomputer/maxtext, the tags matching the seeds: {commits}",
        "why": (
            "the jetstream-pathways image clones MaxText at main (dependencies/dockerfiles/jetstream_pathways."
            f"Dockerfile); the seeds' {BASE} and inference_server={SEED_SERVER} bound its revision to these tags; "
            "the table is what holds at every one of them"
        ),
        "files": f"MaxText/configs/**.yml (config files), {BASE} (keys, default types), {PYCONFIG} (validate_model_name, validate_compute_axis_order), {SERVER_CONFIG} (get_server_config)",
        "extracted": datetime.date.today().isoformat(),
        "by": "tools/conformance/extract_maxtext.py",
    }


def table(git_dir: Path) -> Table:
    tags = window(git_dir)
    if not tags:
        raise SystemExit("no tag of the repository matches the seeds' MaxText (old layout with the seed's server)")
    held = _common([_at_tag(git_dir, tag) for tag in tags])
    return Table(
        "maxtext",
        IMAGE,
        _source(git_dir, tags),
        flags=frozenset(),
        env=frozenset(),
        config_keys=frozenset(held.types),
        types=held.types,
        choices={
            **{k: sorted(v) for k, v in held.choices.items()},
            "inference_server": sorted(held.servers),
            "config_file": sorted(held.files),
        },
        facts={f"inference_server={k}": v for k, v in sorted(held.servers.items()) if v},
    )


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--git-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    print(save(table(args.git_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
