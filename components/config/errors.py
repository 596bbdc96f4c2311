"""Rendering validation problems: every problem at once, at the key path the user wrote, no traceback."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..backends import BACKENDS
from ..common.settings import PROJECT_NAMESPACE
from ..common.validation import UNSHOWN, bound_message, bounds_of, empty_remedy, plain_message, reported
from .models import StackConfig

GCP_KEYS = {"project": "gcp:project", "region": "gcp:region"}
"""Stack config fields read from the ``gcp`` provider namespace (shared with the provider)."""


class ConfigError(pulumi.RunError):
    """Invalid stack configuration: every problem, one per line, with its key path.

    It subclasses :class:`pulumi.RunError`, so ``pulumi up``/``preview`` print the message
    without a Python traceback.
    """

    def __init__(self, problems: list[str], source: str = "stack configuration"):
        self.problems = problems
        n = len(problems)
        super().__init__(
            f"invalid {source}: {n} problem{'s' if n != 1 else ''}\n" + "\n".join(f"  - {p}" for p in problems)
        )


_BACKENDS = tuple(BACKENDS)
"""Discriminator values of the serving union (pydantic adds them to error locations)."""


def _key_path(loc: tuple[Any, ...]) -> str:
    if not loc:
        return f"{PROJECT_NAMESPACE}:<stack>"
    head, *rest = loc
    # Fields are reported by their camelCase alias; map the top level to its config key.
    path = GCP_KEYS.get(head, f"{PROJECT_NAMESPACE}:{head}")
    for i, part in enumerate(rest):
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in _BACKENDS and i == 0 and head == "serving":
            continue  # the union member's tag, not a key the user wrote
        elif part in ("function-after", "function-before", "function-plain", "function-wrap") or "[" in str(part):
            continue  # pydantic's internal validator tags
        else:
            path += f".{part}"
    return path


def _models_in(ann: Any) -> list[type[BaseModel]]:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    return [m for arg in (getattr(ann, "__args__", ()) or ()) for m in _models_in(arg)]


def _model_at(loc: tuple[Any, ...], root: type[BaseModel] = StackConfig) -> type[BaseModel]:
    """The model class that a location path points into (for listing valid keys), from the stack file's model
    ``root``."""
    model: type[BaseModel] = root
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if n == part or f.alias == part), None)
        candidates = _models_in(field.annotation) if field is not None else []
        if not candidates:
            return model
        if len(candidates) > 1 and parts and parts[0] in _BACKENDS:
            tag = parts.pop(0)
            candidates = [
                m
                for m in candidates
                if m.model_fields.get("backend") and tag in str(m.model_fields["backend"].annotation)
            ]
        model = candidates[0]
    return model


_SCALAR_MESSAGES = {
    "bool_type": "must be true or false (unquoted; the Pulumi CLI reads yes, no, on and off as text)",
    "int_type": "must be an integer such as 2 (unquoted; not true, false or text)",
    "float_type": "must be a number such as 0.5 or 2 (unquoted; not true, false or text)",
}
"""What a stack file's boolean, integer and number must be (:data:`~tpu_serving.common.settings.StackBool`...): pydantic's
"Input should be a valid boolean" names no valid value."""


def describe_all(errors: list[Any], root: type[BaseModel] = StackConfig) -> list[str]:
    """Each of pydantic's ``errors`` described (:func:`describe`), but a structured key reported missing while its
    stack-file spelling (``gcp:project``) is there: that one problem is said once, by the stack-file key."""
    misspelt = {e["loc"][0] for e in errors if e["type"] == "extra_forbidden" and len(e["loc"]) == 1}
    return [
        describe(e, root)
        for e in reported(errors)
        if not (e["type"] == "missing" and len(e["loc"]) == 1 and GCP_KEYS.get(str(e["loc"][0])) in misspelt)
    ]


def describe(err: Mapping[str, Any], root: type[BaseModel] = StackConfig) -> str:
    loc = tuple(err["loc"])
    path = _key_path(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        return _unknown_key(loc, path, err.get("input"), root)
    if kind == "missing":
        return _missing_key(loc, path)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return _unknown_backend(path, (err.get("ctx") or {}).get("tag"))
    if kind == "unshown":
        return f"{path}: {err['msg']} ({UNSHOWN})"
    field = _field_at(loc, root)
    said = _SCALAR_MESSAGES.get(kind) or bound_message(err, bounds_of(field.metadata) if field else {})
    remedy = empty_remedy(err, field.annotation, not field.is_required()) if field else ""
    return _bad_value(path, (said or plain_message(err)) + remedy, err.get("input"))


def _field_at(loc: tuple[Any, ...], root: type[BaseModel] = StackConfig) -> FieldInfo | None:
    """The setting at ``loc`` (none for an item of a list: its bounds are the item type's)."""
    if not loc or not isinstance(loc[-1], str):
        return None
    model = _model_at(loc[:-1], root)
    return next((f for n, f in model.model_fields.items() if loc[-1] in (n, f.alias)), None)


NO_PARTITION: Mapping[str, str] = {
    "saxml": "a JobSet",
    "pathways-job": "a PathwaysJob, run as a JobSet by its controller",
}
"""Backends whose serving ``canaryGroups`` cannot apply, and what they run: a canary is a LeaderWorkerSet's
``rolloutStrategy.rollingUpdateConfiguration.partition``, and neither spec has any rollout strategy or partition
(kubernetes-sigs/jobset v0.12.0 config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml, spec: coordinator,
failurePolicy, managedBy, network, replicatedJobs, startupPolicy, successPolicy, suspend, ttlSecondsAfterFinished,
volumeClaimPolicies; google/pathways-job v0.1.4 config/crd/bases/pathways-job.pathways.domain_pathwaysjobs.yaml,
spec: controller, customComponents, maxRestarts, pathwaysDir, pathwaysVersion, workers)."""


def _unknown_key(loc: tuple[Any, ...], path: str, value: object = None, root: type[BaseModel] = StackConfig) -> str:
    """A key no model declares: a stack file's ``gcp:`` key in structured settings, ``canaryGroups`` of a backend
    without a LeaderWorkerSet, or a key with its valid keys and the closest of them."""
    if len(loc) == 1 and loc[0] in GCP_KEYS.values():
        return _stack_file_key(loc[0])
    if len(loc) == 3 and loc[0] == "serving" and loc[2] == "canaryGroups" and loc[1] in NO_PARTITION:
        return (
            f"{path} = {json.dumps(value, default=str)}: backend {loc[1]} runs {NO_PARTITION[loc[1]]}, which has no rolling-update partition: a canary "
            "holds back a LeaderWorkerSet's lower groups (backends vllm and jetstream-pathways); remove canaryGroups"
        )
    model = _model_at(loc[:-1], root)
    names = [f.alias or n for n, f in model.model_fields.items()]
    close = difflib.get_close_matches(str(loc[-1]), names, n=1)
    hint = f"did you mean `{close[0]}`? " if close else _other_backends(loc, root)
    if model is root:
        names = [GCP_KEYS.get(n, f"{PROJECT_NAMESPACE}:{f.alias or n}") for n, f in model.model_fields.items()]
    return f"{path}: unknown key; {hint}valid keys: {', '.join(names)}"


def _other_backends(loc: tuple[Any, ...], root: type[BaseModel]) -> str:
    """For a serving key of another backend (``serving.fallback`` under jetstream-pathways, say): which backends take
    it, or ``""`` (new-user review of issue 37 item 2, M2: the key read as a typo)."""
    if len(loc) != 3 or loc[0] != "serving" or root is not StackConfig:
        return ""
    takes = [
        tag
        for tag in sorted(_BACKENDS)
        if tag != loc[1]
        and any(loc[2] in (n, f.alias) for n, f in _model_at(("serving", tag), root).model_fields.items())
    ]
    return f"a setting of backend {', '.join(takes)}, not of {loc[1]}; " if takes else ""


def _stack_file_key(stack_key: str) -> str:
    """A stack file's ``gcp:`` key given to structured settings, which name it by its field."""
    field = next(f for f, key in GCP_KEYS.items() if key == stack_key)
    return (
        f"{stack_key}: a stack file's key; structured settings (validate_stack, the provider's `config`) "
        f"name it `{field}`"
    )


def _missing_key(loc: tuple[Any, ...], path: str) -> str:
    """A required key not set; a ``gcp:`` one says how a stack file sets it."""
    if len(loc) == 1 and loc[0] in GCP_KEYS:
        return (
            f"{path}: required key is missing; in a stack file: `pulumi config set {path} <value>` (validate_stack "
            f"and the provider's `config` name it `{loc[0]}`)"
        )
    return f"{path}: required key is missing"


def _unknown_backend(path: str, tag: object) -> str:
    """The serving union's ``backend`` tag is missing or names no backend."""
    shown = f" = {json.dumps(tag)}" if tag else ""
    return f"{path}.backend{shown}: unknown serving backend; valid: {', '.join(_BACKENDS)}"


def _bad_value(path: str, msg: str, value: object) -> str:
    """A value refused: shown beside its key when it is a scalar or a list of at most 80 characters as JSON (an empty
    list too: ``serving.fallback = []``, new-user review of the capacity fallback, m3); a mapping is not shown."""
    value_shown = json.dumps(value, default=str) if not isinstance(value, dict) else None
    if value_shown is not None and len(value_shown) <= 80:
        return f"{path} = {value_shown}: {msg}"
    return f"{path}: {msg}"
