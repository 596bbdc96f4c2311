"""Convert an offline plan's GCP resources to the Terraform plan JSON that Checkov's ``terraform_plan`` framework reads.

pulumi-gcp is bridged from ``hashicorp/terraform-provider-google``: each Pulumi type is one Terraform
resource type, and each input one Terraform argument, renamed by fixed rules (pulumi-terraform-bridge):
``snake_case`` becomes ``camelCase``, a block of at most one item (``maxItemsOne``) becomes an object, and a
list block takes a plural name. :data:`SHAPES` (``tf_shapes.json``, from pulumi-gcp's bridge metadata; see
:mod:`.generate_shapes`) holds the Terraform names and block shapes, so the conversion undoes exactly those
rules. Values unknown before deployment (``<unknown>``) are left out of ``planned_values`` and marked in
``after_unknown``, as ``terraform show -json`` does
(https://developer.hashicorp.com/terraform/internals/json-format, "Plan Representation").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tpu_serving_tools.preview.offline import UNKNOWN

SHAPES_FILE = Path(__file__).with_name("tf_shapes.json")
SHAPES: Mapping[str, Any] = json.loads(SHAPES_FILE.read_text())["types"]
"""Pulumi type token -> ``{"terraform": type, "fields": {tf name: {"one": bool, "fields": {...}}}}``."""

TERRAFORM_VERSION = "1.9.0"
"""The Terraform version the plan document claims (Checkov reads the format, not the version)."""


class UnknownResourceType(ValueError):
    """A GCP resource type with no entry in ``tf_shapes.json`` (add it to ``generate_shapes.TOKENS``)."""


def snake(name: str) -> str:
    """``enablePrivateNodes`` -> ``enable_private_nodes`` (digits stay with their word: ``ipv4`` -> ``ipv4``)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _singulars(plural: str) -> list[str]:
    """Terraform names a plural Pulumi list name may come from (the bridge's pluralisation, undone)."""
    out = []
    if plural.endswith("ies"):
        out.append(plural[:-3] + "y")
    if plural.endswith("es"):
        out.append(plural[:-2])
    if plural.endswith("s"):
        out.append(plural[:-1])
    return out


def terraform_name(key: str, fields: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """The Terraform name of Pulumi input ``key`` at a level with block shapes ``fields``, and its shape."""
    name = snake(key)
    if name in fields:
        return name, fields[name]
    for singular in _singulars(name):
        if singular in fields and not fields[singular]["one"]:
            return singular, fields[singular]
    return name, None


def _convert(value: Any, shape: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """(Terraform value, its ``after_unknown`` mark) of one Pulumi value of shape ``shape``."""
    if value == UNKNOWN:
        return None, True
    if shape is None:  # an attribute: a scalar, a list of scalars or a map (labels), kept as it is
        return value, False
    if isinstance(value, Mapping):
        block, unknown = convert_block(value, shape["fields"])
        return [block], ([unknown] if unknown else False)
    if isinstance(value, list):
        if not any(isinstance(v, Mapping) for v in value):  # a list of scalars (node_locations)
            return value, False
        pairs = [_convert(v, shape) for v in value]
        items = [p[0][0] if isinstance(p[0], list) else p[0] for p in pairs]
        marks = [p[1][0] if isinstance(p[1], list) else p[1] for p in pairs]
        return items, (marks if any(marks) else False)
    return value, False


def convert_block(inputs: Mapping[str, Any], fields: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Pulumi object's inputs as a Terraform block's values, and the ``after_unknown`` of the unknown ones."""
    values: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for key, value in inputs.items():
        if key.startswith("__"):  # Pulumi's own bookkeeping (``__defaults``), not an input
            continue
        name, shape = terraform_name(key, fields)
        converted, mark = _convert(value, shape)
        if mark is True:
            unknown[name] = True
            continue
        values[name] = converted
        if mark:
            unknown[name] = mark
    return values, unknown


def _address_name(name: str) -> str:
    """A Terraform resource name (letters, digits, ``_`` and ``-``, not starting with a digit)."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    return clean if clean[:1].isalpha() or clean[:1] == "_" else f"r_{clean}"


def terraform_plan(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's GCP resources as a ``terraform show -json`` plan document."""
    planned: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for r in plan["resources"]:
        if not r.get("custom") or not str(r["type"]).startswith("gcp:"):
            continue
        if r["type"] not in SHAPES:
            raise UnknownResourceType(f"{r['type']} ({r['name']}): not in {SHAPES_FILE.name}")
        tf_type = SHAPES[r["type"]]["terraform"]
        name = _address_name(r["name"])
        while f"{tf_type}.{name}" in seen:
            name += "_"
        address = f"{tf_type}.{name}"
        seen.add(address)
        values, unknown = convert_block(r["inputs"], SHAPES[r["type"]]["fields"])
        common = {"address": address, "mode": "managed", "type": tf_type, "name": name}
        provider = "registry.terraform.io/hashicorp/google"
        planned.append({**common, "provider_name": provider, "schema_version": 0, "values": values})
        changes.append(
            {
                **common,
                "provider_name": provider,
                "change": {"actions": ["create"], "before": None, "after": values, "after_unknown": unknown},
            }
        )
    return {
        "format_version": "1.2",
        "terraform_version": TERRAFORM_VERSION,
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {"root_module": {}},
    }
