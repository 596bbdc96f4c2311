"""Settings declared once: the pydantic base, shared field types and the dataclass bridge.

Every setting of the library is declared once, with its type, default, bounds and
description. Stack files are validated against these models (camelCase keys, unknown keys
refused); components take the same values in Python (snake_case).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import ipaddress
import re
import types
import typing
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    create_model,
    model_validator,
)
from pydantic.alias_generators import to_camel

from .naming import NameLimit, check_dns_name
from .validation import BOUNDS, Choice, declared_checks, raising, type_hints

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Settings = TypeVar("_Settings", bound="DataclassInstance")

PROJECT_NAMESPACE = "tpu-serving"
"""The Pulumi project name, and so the namespace of this package's stack config keys."""


class CreateOrExisting(Choice):
    """Whether the stack creates a cloud resource, or it exists already (made and kept by someone else, never
    changed by the stack)."""

    CREATE = "create"
    EXISTING = "existing"


def described(text: str, **kwargs: Any) -> Any:
    """A dataclass field with a description and optional bounds (``ge``, ``le``, ``min_length``...).

    The stack config model generated from the dataclass (:func:`settings_model`) takes both;
    the component checks the same bounds on its arguments (:mod:`tpu_serving.common.validation`). With
    ``unshown=True`` no message repeats a refused value (it may hold a secret).
    """
    bounds = {k: kwargs.pop(k) for k in BOUNDS if k in kwargs}
    check = kwargs.pop("check", None)
    unshown = kwargs.pop("unshown", False)
    return field(metadata={"description": text, "bounds": bounds, "check": check, "unshown": unshown}, **kwargs)


class Model(BaseModel):
    """Base of every config model: frozen, unknown keys rejected, camelCase keys."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
    )


def _whole(value: Any) -> Any:
    """An integral float as the int it is (``diskSizeGb: 300.0``); anything else as given, for the strict int."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


StackBool = Annotated[bool, Strict()]
"""A boolean of a stack file: only ``true`` or ``false``. pydantic's lax mode would take the strings ``"yes"``,
``"no"``, ``"on"``, ``"off"``, ``"true"``, ``"1"``... for one, and the Pulumi CLI reads ``yes``, ``no``, ``on`` and
``off`` as text (YAML 1.2), so ``imageStreaming: no`` would turn the feature off as a string."""
StackInt = Annotated[int, BeforeValidator(_whole), Strict()]
"""An integer of a stack file: a number, never ``true`` or ``false`` (lax mode reads ``count: true`` as 1) nor text
(``"2"``); an integral float is its integer, as before."""
StackFloat = Annotated[float, Strict()]
"""A number of a stack file: an integer or a float, never ``true``/``false`` nor text."""

_STACK_SCALARS: dict[type, Any] = {bool: StackBool, int: StackInt, float: StackFloat}


def strict_scalars(annotation: Any) -> Any:
    """``annotation`` with every ``bool``, ``int`` and ``float`` in it (inside ``X | None``, ``list[X]``,
    ``Mapping[str, X]``, ``Annotated[X, ...]``...) as :data:`StackBool`, :data:`StackInt`, :data:`StackFloat`: the
    types of a setting as a stack file may write it."""
    if isinstance(annotation, type) and annotation in _STACK_SCALARS:
        return _STACK_SCALARS[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return Annotated[(strict_scalars(args[0]), *annotation.__metadata__)]
    if not args or origin is typing.Literal:
        return annotation
    inner = tuple(a if a is Ellipsis else strict_scalars(a) for a in args)
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[inner]  # noqa: UP007 - built from a tuple
    return origin[inner]


def _dns_validator(limit: NameLimit, min_length: int = 1) -> AfterValidator:
    def check(value: str | None) -> str | None:
        problem = value is not None and check_dns_name(value, limit=limit, min_length=min_length)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


ClusterName = Annotated[str, _dns_validator(NameLimit.GKE_CLUSTER)]
"""A GKE cluster name (DNS-1123, at most 40 characters)."""
PoolName = Annotated[str, _dns_validator(NameLimit.GKE_NODE_POOL)]
"""A node pool name (DNS-1123, at most 40 characters)."""
K8sName = Annotated[str, _dns_validator(NameLimit.K8S_LABEL)]
"""A Kubernetes object name that must be a DNS-1123 label (at most 63 characters)."""
ServiceAccountId = Annotated[str, _dns_validator(NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)]
"""A GCP service account id (6 to 30 characters)."""
SingleGroup = Annotated[
    Literal["accepted"] | None,
    Field(
        description="`accepted`: the stack knows that its serving is one group with no spare slice (or a Saxml "
        "cell), so a node failure, a repair, TPU host maintenance, a node upgrade or a rollout stops the whole "
        "service until the slice is back and the model has reloaded. Required for such a stack; unset refuses it."
    ),
]
"""``serving.singleGroup`` of every serving backend whose disruption can be a full outage: the acknowledgement
(SRE review B2). Declared once here; :func:`tpu_serving.config.checks.full_outage_problems` refuses a stack that
needs it and leaves it unset."""


def settings_model(cls: type, name: str, exclude: tuple[str, ...] = (), required: tuple[str, ...] = ()) -> type[Model]:
    """A config model with the fields, types, defaults and descriptions of dataclass ``cls``.

    The components define their settings once, as documented frozen dataclasses; the
    stack files are validated against this generated model; :func:`to_settings` turns a
    validated model back into the dataclass. Nested settings dataclasses become nested
    models; ``exclude`` leaves out fields the stack file sets elsewhere; ``required`` makes optional fields (``X |
    None = None``) required ``X`` in this model.
    """
    hints = type_hints(cls, include_extras=True)
    spec: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in exclude:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = ...
        annotation = strict_scalars(hints[f.name])  # no "yes" for a bool, no true for an int
        if f.name in required:
            annotation, default = _optional_item(annotation) or annotation, ...
        item = _tuple_item(annotation)
        if item is not None and dataclasses.is_dataclass(item):
            # A tuple of settings dataclasses is a list of their models in the stack file.
            annotation = types.GenericAlias(list, (settings_model(item, item.__name__ + "Config"),))
            default = list(default) if default is not ... else ...
        elif isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
            # A nested settings dataclass is a nested model, defaulting to its own defaults.
            nested = settings_model(annotation, annotation.__name__ + "Config")
            annotation, default = nested, (... if default is ... else nested())
        elif (optional := _optional_item(annotation)) is not None and dataclasses.is_dataclass(optional):
            # An optional nested settings dataclass is an optional nested model (unset: None).
            annotation = settings_model(optional, optional.__name__ + "Config") | None
        bounds = f.metadata.get("bounds") or {}
        check = f.metadata.get("check")
        spelled = functools.partial(_camel_keys, cls=cls)  # a check's problem names fields as the stack file does
        if f.metadata.get("unshown"):
            # the bounds too inside the validator that keeps the value out of every message
            annotation, bounds = Annotated[(annotation, *declared_checks(f, spelled))], {}
        elif check is not None:
            annotation = Annotated[annotation, AfterValidator(raising(check, spelled))]
        spec[f.name] = (annotation, Field(default, description=f.metadata["description"], **bounds))
    validators: dict[str, Any] = (
        {"_rules": model_validator(mode="after")(rules_of(cls, exclude))} if hasattr(cls, "problems") else {}
    )
    return create_model(name, __base__=Model, __doc__=cls.__doc__, __validators__=validators, **spec)


def rules_of(cls: type, exclude: tuple[str, ...]) -> Any:
    """A model validator running the dataclass's own ``problems()`` on the validated values. Fields the
    stack file sets elsewhere (``exclude``) are None here: rules skip what they cannot see, and the
    stack checks those fields where it sets them."""

    def check(model: Any) -> Any:
        problems: list[str] = to_settings(model, cls, **dict.fromkeys(exclude)).problems()
        if problems:
            # The rules name Python fields; the stack file spells them in camelCase.
            raise ValueError("; ".join(_camel_keys(p, cls) for p in problems))
        return model

    return check


def _camel_keys(text: str, cls: type) -> str:
    """A problem of the library's arguments as the stack file spells it: camelCase keys, YAML's booleans (the library
    says ``= True``, a stack file ``= true``)."""
    for f in dataclasses.fields(cls):
        text = text.replace(f.name, to_camel(f.name))
    return re.sub(r"= (True|False)\b", lambda m: f"= {m.group(1).lower()}", text)


def _optional_item(annotation: Any) -> type | None:
    """``X`` for ``X | None`` (a class ``X``), else None."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        if len(members) == 1 and len(args) == 2 and isinstance(members[0], type):
            return members[0]
    return None


def _tuple_item(annotation: Any) -> type | None:
    """``X`` for ``tuple[X, ...]`` or ``Sequence[X]``, else None."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis and isinstance(args[0], type):
        return args[0]
    if origin is collections.abc.Sequence and len(args) == 1 and isinstance(args[0], type):
        return args[0]
    return None


def declared(cls: type, name: str) -> Any:
    """The pydantic ``Field`` of setting ``name`` of dataclass ``cls``: its default, bounds and
    description, declared once there, for a hand-written config model that shares the setting."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    if f.default is not dataclasses.MISSING:
        default: Any = f.default
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:
        default = ...
    return Field(default, description=f.metadata["description"], **(f.metadata.get("bounds") or {}))


def to_settings(model: object, cls: type[_Settings], **others: Any) -> _Settings:
    """The dataclass ``cls`` holding the values of a model made by :func:`settings_model`
    (and ``others`` for the fields it excluded)."""
    hints = type_hints(cls)
    values: dict[str, Any] = dict(others)
    for f in dataclasses.fields(cls):
        if f.name in others:
            continue
        value = getattr(model, f.name)
        annotation = strict_scalars(hints[f.name])  # no "yes" for a bool, no true for an int
        item = _tuple_item(annotation)
        if item is not None and dataclasses.is_dataclass(item):
            value = tuple(to_settings(v, item) for v in value)
        elif isinstance(annotation, type) and dataclasses.is_dataclass(annotation) and value is not None:
            value = to_settings(value, annotation)
        elif (optional := _optional_item(annotation)) is not None and dataclasses.is_dataclass(optional):
            value = None if value is None else to_settings(value, optional)
        values[f.name] = value
    return cls(**values)


SECRET_WORDS = frozenset({"token", "key", "apikey", "secret", "password", "passwd", "credential", "credentials"})
"""Words that name a secret: a flag or key ending in one (``--hf-token``, ``--api-key``, MaxText's
``hf_access_token``) carries a secret, and so does one with ``secret``, ``password`` or ``credentials`` anywhere."""


def names_a_secret(name: str) -> bool:
    """Whether a flag or key ``name`` says it holds a secret (:data:`SECRET_WORDS`), its words split at ``-``,
    ``_`` and ``.``; ``--max-num-batched-tokens``, ``--ssl-keyfile`` and ``tokenizer_path`` name none."""
    words = [w for w in re.split(r"[-_.]+", name.lower()) if w]
    return bool(words) and (
        words[-1] in SECRET_WORDS or bool({"secret", "password", "passwd", "credentials"} & set(words))
    )


_QUANTITY = re.compile(r"^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[numkMGTPE]|[KMGTPE]i)?$")
"""A non-negative Kubernetes resource quantity: a decimal number and one suffix, binary SI (``Ki``..``Ei``),
decimal SI (``n u m k M G T P E``) or a decimal exponent (kubernetes/apimachinery
pkg/api/resource/quantity.go, the ``<quantity>`` grammar of ``ParseQuantity``)."""


def quantity_problem(value: str) -> str:
    """Why ``value`` is not a Kubernetes resource quantity such as ``500m`` or ``4Gi``, or ``""``."""
    if _QUANTITY.match(value):
        return ""
    return "is not a Kubernetes quantity such as 2, 500m (CPU) or 4Gi (memory)"


def quantity(text: str, default: str) -> Any:
    """A described field holding a Kubernetes resource quantity (checked by :func:`quantity_problem`)."""
    return described(text, default=default, check=quantity_problem)


def cidr_problem(block: str) -> str:
    """Why ``block`` is not a CIDR block such as 10.0.0.0/8, or ``""``."""
    try:
        ipaddress.ip_network(block, strict=True)
    except ValueError as err:
        return f"not a CIDR block ({err})"
    return ""


def cidr_list_problem(blocks: Sequence[str]) -> str:
    """Why one of ``blocks`` is not a CIDR block (the first one that is not), or ``""``."""
    return next((f"{block!r} is {problem}" for block in blocks if (problem := cidr_problem(block))), "")


def ports_problem(ports: Sequence[int]) -> str:
    """Why one of ``ports`` is no port a NetworkPolicy takes, or ``""``: 1 to 65535 (k8s.io/kubernetes v1.36.3,
    pkg/apis/networking/validation/validation.go l.78, ``validation.IsValidPortNum`` of ``NetworkPolicyPort.port``)."""
    return next((f"{port} is not a port: a port is 1 to 65535" for port in ports if not 1 <= port <= 65535), "")


PROXY_ONLY_LONGEST_PREFIX = 26
"""A proxy-only subnet needs 64 addresses or more: a /26 or shorter prefix
(https://cloud.google.com/load-balancing/docs/l7-internal/proxy-only-subnets; /23 recommended)."""


def proxy_only_subnet_problem(block: str) -> str:
    """Why ``block`` cannot be a proxy-only subnet (not a CIDR block, or fewer than 64 addresses), or ``""``."""
    problem = cidr_problem(block)
    if problem:
        return problem
    prefix = ipaddress.ip_network(block).prefixlen
    if prefix > PROXY_ONLY_LONGEST_PREFIX:
        return f"a proxy-only subnet needs at least 64 addresses (a /{PROXY_ONLY_LONGEST_PREFIX} or larger; /23 recommended), /{prefix} has {2 ** (32 - prefix)}"
    return ""


def _cidr(value: str) -> str:
    problem = cidr_problem(value)
    if problem:
        raise ValueError(problem)
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]
"""A CIDR block such as 10.0.0.0/8."""
