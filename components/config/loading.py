"""Loading a stack's settings: from structured data, a flat Pulumi config map, or the running engine."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic import ValidationError

from ..common.settings import PROJECT_NAMESPACE
from .checks import (
    capacity_problems,
    cluster_problems,
    derived_name_problems,
    gateway_problems,
    serving_problems,
    tenancy_quota_problems,
    zone_problems,
)
from .errors import GCP_KEYS, ConfigError, describe_all
from .existing_checks import existing_problems
from .mirror import mirror_problems
from .models import StackConfig
from .platform_checks import platform_problems
from .production import production_problems


def validate_stack(data: Mapping[str, Any], source: str = "stack configuration") -> StackConfig:
    """Validate structured stack data (camelCase keys) into a :class:`StackConfig`.

    Raises :class:`ConfigError` listing every problem.
    """
    try:
        cfg = StackConfig.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(describe_all(exc.errors()), source) from None
    problems = (
        derived_name_problems(cfg)
        + capacity_problems(cfg)
        + zone_problems(cfg)
        + cluster_problems(cfg)
        + serving_problems(cfg)
        + gateway_problems(cfg)
        + existing_problems(cfg)
        + platform_problems(cfg)
        + mirror_problems(cfg)
        + tenancy_quota_problems(cfg)
        + production_problems(cfg)
    )
    if problems:
        raise ConfigError(problems, source)
    return cfg


def _decode(value: Any) -> Any:
    # The Pulumi engine hands structured config values to the program as JSON text, and a top-level boolean
    # (``production: false``) as its JSON literal.
    if isinstance(value, str) and (value[:1] in ("{", "[") or value in ("true", "false")):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def load_stack_config(
    values: Mapping[str, Any], source: str = "stack configuration", namespace: str = PROJECT_NAMESPACE
) -> StackConfig:
    """Build the stack config from a flat Pulumi config map (``namespace:key`` -> value).

    Keys in ``namespace`` become fields: the Pulumi project's own name, under which ``pulumi config`` and a stack
    file's bare keys put them (this repository's project is ``tpu-serving``; a program of another name reads its
    own, and keys written ``tpu-serving:...`` too, which its own override). ``gcp:project`` and ``gcp:region``
    are shared with the Google provider; keys of other namespaces are left to their providers. Problems name
    the keys as the stack file holds them.
    """
    data = stack_data(values, source, namespace)
    try:
        return validate_stack(data, source)
    except ConfigError as err:
        if namespace == PROJECT_NAMESPACE:
            raise
        own = [p.replace(f"{PROJECT_NAMESPACE}:", f"{namespace}:") for p in err.problems]
        raise ConfigError(own, source) from None


def stack_data(values: Mapping[str, Any], source: str, namespace: str = PROJECT_NAMESPACE) -> dict[str, Any]:
    """The structured settings of a flat Pulumi config map (:func:`load_stack_config`), before validation."""
    data: dict[str, Any] = {}
    for field, key in GCP_KEYS.items():
        if key in values:
            data[field] = _decode(values[key])
    shadowing = []
    for prefix in dict.fromkeys((f"{PROJECT_NAMESPACE}:", f"{namespace}:")):
        for key, value in values.items():
            if key.startswith(prefix):
                field = key[len(prefix) :]
                if field in GCP_KEYS:  # a bare `region:` would set the cluster's region behind gcp:region's back
                    shadowing.append(
                        f"{key}: the {field} is `{GCP_KEYS[field]}`, which the Google provider reads too; "
                        f"write `{GCP_KEYS[field]}: ...` instead"
                    )
                    continue
                data[field] = _decode(value)
    if shadowing:
        raise ConfigError(shadowing, source)
    return data


def load_from_pulumi() -> StackConfig:
    """Load the current stack's config as the Pulumi engine passed it to this program."""
    from pulumi.runtime import config as runtime_config

    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return load_stack_config(values, f"configuration of stack {pulumi.get_stack()!r}", pulumi.get_project())
