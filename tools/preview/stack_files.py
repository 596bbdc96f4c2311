"""A Pulumi project's stack files, read as the Pulumi CLI reads them.

``Pulumi.yaml`` names the project, its ``main`` and ``stackConfigDir``, and config defaults; a stack file's ``config:``
holds the stack's settings. Keys without a namespace belong to the project; objects and lists reach the program as
JSON text, scalars as strings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpu_serving_tools.preview import strict_yaml


class StackConfigError(Exception):
    """A stack file the CLI would refuse, or one this offline run cannot read."""


@dataclass(frozen=True)
class Project:
    """What ``Pulumi.yaml`` says about the project."""

    name: str
    root: Path
    stack_config_dir: Path
    main: Path
    config_defaults: Mapping[str, Any]

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        """Every stack that has a stack file, sorted."""
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.stack_config_dir.glob("Pulumi.*.yaml"))


def load_project(root: Path) -> Project:
    """Read ``Pulumi.yaml`` at ``root``."""
    if not (root / "Pulumi.yaml").is_file():
        raise StackConfigError(f"no Pulumi.yaml in {root}: run in the project's folder or pass --root")
    try:
        doc = strict_yaml.load(root / "Pulumi.yaml", "Pulumi.yaml")
    except strict_yaml.StrictYamlError as err:
        raise StackConfigError(str(err)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise StackConfigError("Pulumi.yaml: expected a mapping with the project's `name:` (a string)")
    defaults: dict[str, Any] = {}
    for key, spec in _config_section(doc, "Pulumi.yaml").items():
        value = spec.get("default") if isinstance(spec, dict) else spec
        if value is not None:
            defaults[key] = value
    return Project(
        name=doc["name"],
        root=root,
        stack_config_dir=root / doc.get("stackConfigDir", "."),
        main=root / doc.get("main", "__main__.py"),
        config_defaults=defaults,
    )


def _config_section(doc: Mapping[str, Any], shown: str) -> Mapping[str, Any]:
    """The ``config:`` of a project or stack file: a mapping of keys to values (absent or empty: none)."""
    config = doc.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise StackConfigError(
            f"{shown}: `config` is {_KINDS.get(type(config), 'a ' + type(config).__name__)}; it must be a mapping "
            "of keys to values (`config:`, then `  gcp:project: my-project` on the next line)"
        )
    for key in config:
        if not isinstance(key, str):
            raise StackConfigError(
                f"{shown}: config key {key!r} is {_KINDS.get(type(key), 'no string')}; a key is text"
            )
    return config


_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def _namespaced(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _as_config_text(key: str, value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"secure"}:
        raise StackConfigError(
            f"{key}: secure values need the stack's secrets provider, which an offline preview "
            "does not have; keep secrets out of the stack files used for offline previews"
        )
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value)


def stack_config(project: Project, stack: str) -> dict[str, str]:
    """The config map the CLI would hand the program for ``stack``: ``namespace:key`` -> text."""
    return config_map(project, stack_file_config(project, stack))


def stack_file_config(project: Project, stack: str) -> Mapping[str, Any]:
    """The ``config:`` mapping of ``stack``'s stack file, as loaded (its keys as the file writes them)."""
    path = project.stack_file(stack)
    if not path.is_file():
        raise StackConfigError(
            f"no stack file {path.relative_to(project.root)}; stacks: {', '.join(project.stacks()) or 'none'}"
        )
    try:
        doc = strict_yaml.load(path, str(path.relative_to(project.root))) or {}
    except strict_yaml.StrictYamlError as err:
        raise StackConfigError(str(err)) from None
    if not isinstance(doc, dict):
        raise StackConfigError(f"{path.relative_to(project.root)}: expected a mapping with a `config:` key")
    top = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")
    if unknown := sorted(set(doc) - set(top)):  # settings written at the top level, most likely: say where they go
        raise StackConfigError(
            f"{path.name}: unknown top-level keys {unknown}; the settings go under `config:`, indented beneath it "
            f"(`config:`, then `  {unknown[0]}: ...` on the next line); the top level holds only {', '.join(top)}"
        )
    return _config_section(doc, str(path.relative_to(project.root)))


def config_map(project: Project, config: Mapping[str, Any]) -> dict[str, str]:
    """The config map the CLI would hand the program for a stack file whose ``config:`` is ``config``:
    ``namespace:key`` -> text, over the project's defaults."""
    merged = {_namespaced(project.name, k): v for k, v in project.config_defaults.items()}
    merged.update({_namespaced(project.name, k): v for k, v in config.items()})
    return {k: _as_config_text(k, v) for k, v in merged.items()}
