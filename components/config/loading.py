"""Loading a stack's settings: from structured data, a flat Pulumi config map, or the running engine."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic import ValidationError

from ..settings import PROJECT_NAMESPACE
from .checks import (
    capacity_problems,
    cluster_problems,
    derived_name_problems,
    gateway_problems,
    serving_problems,
    zone_problems,
)
from .errors import GCP_KEYS, ConfigError, describe
from .models import StackConfig


def validate_stack(data: Mapping[str, Any], source: str = "stack configuration") -> StackConfig:
    """Validate structured stack data (camelCase keys) into a :class:`StackConfig`.

    Raises :class:`ConfigError` listing every problem.
    """
    try:
        cfg = StackConfig.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError([describe(e) for e in exc.errors()], source) from None
    problems = (
        derived_name_problems(cfg)
        + capacity_problems(cfg)
        + zone_problems(cfg)
        + cluster_problems(cfg)
        + serving_problems(cfg)
        + gateway_problems(cfg)
    )
    if problems:
        raise ConfigError(problems, source)
    return cfg


def _decode(value: Any) -> Any:
    # The Pulumi engine hands structured config values to the program as JSON text.
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def load_stack_config(values: Mapping[str, Any], source: str = "stack configuration") -> StackConfig:
    """Build the stack config from a flat Pulumi config map (``namespace:key`` -> value).

    Keys in this project's namespace become fields; ``gcp:project`` and ``gcp:region`` are
    shared with the Google provider; keys of other namespaces are left to their providers.
    """
    data: dict[str, Any] = {}
    for field, key in GCP_KEYS.items():
        if key in values:
            data[field] = _decode(values[key])
    prefix = f"{PROJECT_NAMESPACE}:"
    for key, value in values.items():
        if key.startswith(prefix):
            data[key[len(prefix) :]] = _decode(value)
    return validate_stack(data, source)


def load_from_pulumi() -> StackConfig:
    """Load the current stack's config as the Pulumi engine passed it to this program."""
    from pulumi.runtime import config as runtime_config

    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return load_stack_config(values, f"configuration of stack {pulumi.get_stack()!r}")
