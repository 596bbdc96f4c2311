"""Components check their own arguments with pydantic, the engine of the stack settings, and
report every problem at once.

Each component's arguments are a frozen dataclass. :func:`check_arguments` validates it with a
``pydantic.TypeAdapter`` built from the dataclass's fields (:func:`adapter`): each field against
its annotation, with the bounds and ``check`` it declares (:func:`tpu_serving.common.settings.described`),
nested dataclasses too, then the rules of the class itself (its ``problems()``) once its fields
are valid. It raises one :class:`ArgumentsError` naming each bad argument by its Python field
path, its value and what it must be.

Two adaptations of pydantic's defaults, written once in :func:`_validated_as`: ``str``, ``bool``,
``int`` and ``float`` are strict (``"yes"`` is no boolean, ``"8"`` no integer), except that an
integral float is an integer (numbers come back from the component provider as floats); and a
``pulumi.Input`` field takes another resource's ``pulumi.Output`` unvalidated (wiring). A
``Sequence`` is held as a tuple, and a string is never taken for a sequence of names. Arguments arrive as the dataclass (from Python) or as a
mapping of its fields (from the component provider for TypeScript, Go and YAML programs), nested
dataclasses likewise; either way the component gets the dataclass back.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar, Union

import pulumi
import typing_extensions
from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

BOUNDS = ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern")

UNSHOWN = "the value is not shown: it may hold a secret"
"""What a message says in place of a refused value it never repeats (:func:`_unshown`)."""
"""Constraints a setting may declare once, for both the stack file and the component's arguments."""


class Choice(str, enum.Enum):
    """A string setting with a fixed set of values: an enum in the multi-language schema.

    Members are strings (``Mode.INTERLEAVED == "interleaved"``) that print as their value, and
    components accept the plain strings too.
    """

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class ArgumentsError(pulumi.RunError):
    """Invalid component arguments: every problem, one per line (printed without a traceback)."""

    def __init__(self, component: str, problems: list[str]):
        self.problems = problems
        n = len(problems)
        super().__init__(
            f"invalid arguments of {component}: {n} problem{'s' if n != 1 else ''}\n"
            + "\n".join(f"  - {p}" for p in problems)
        )


_Args = TypeVar("_Args")


def check_arguments(component: str, args: Any, cls: type[_Args]) -> _Args:
    """``args`` (a ``cls``, or a mapping of its fields) as a valid ``cls``, or :class:`ArgumentsError` naming
    ``component``: its class and resource name, so that a program of two of them is told which (library review 3, m4)."""
    try:
        return typing.cast(_Args, adapter(cls).validate_python(args))
    except ValidationError as err:
        raise ArgumentsError(component, problems_of(err, cls.__name__, cls)) from None


def argument_problems(args: Any) -> list[str]:
    """Every problem of the dataclass ``args``, as :func:`check_arguments` reports them (none: ``[]``)."""
    try:
        adapter(type(args)).validate_python(args)
    except ValidationError as err:
        return problems_of(err, type(args).__name__, type(args))
    return []


def adapter(cls: type) -> TypeAdapter[Any]:
    """The pydantic validator of dataclass ``cls`` as a component's arguments (built once per class)."""
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(_dataclass(cls))
    return _ADAPTERS[cls]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def type_hints(cls: type, *, include_extras: bool = False) -> dict[str, Any]:
    """``cls``'s resolved annotations; ``pulumi.Input[T]`` names ``Output[T]`` as a forward reference,
    which is resolved in the SDK's own module."""
    return typing.get_type_hints(
        cls, globalns={**vars(pulumi.output), **vars(sys.modules[cls.__module__])}, include_extras=include_extras
    )


def declared_checks(f: dataclasses.Field[Any], spelled: Callable[[str], str] = str) -> list[Any]:
    """The pydantic constraints a dataclass field declares with :func:`~tpu_serving.common.settings.described`:
    its bounds and its ``check(value) -> problem or ""`` (its problem passed through ``spelled``), inside
    :func:`_unshown` when its value is never shown."""
    bounds = f.metadata.get("bounds") or {}
    check = f.metadata.get("check")
    checks = [*([Field(**bounds)] if bounds else []), *([AfterValidator(raising(check, spelled))] if check else [])]
    return [*checks, WrapValidator(_unshown)] if f.metadata.get("unshown") else checks


def _unshown(value: Any, handler: Callable[[Any], Any]) -> Any:
    """Validation of a setting whose refused value no message repeats (``described(..., unshown=True)``): it may
    hold a secret (a ``--api-key=...`` among engine flags, a token pasted where a Secret's name goes). Its problems
    become one ``unshown`` error, which :func:`problems_of` and the stack file's messages print without the value."""
    try:
        return handler(value)
    except ValidationError as err:
        found = [
            "".join(_step(p) for p in e["loc"]) + (": " if e["loc"] else "") + _message(e)
            for e in err.errors(include_url=False)
        ]
        raise PydanticCustomError("unshown", "{problems}", {"problems": "; ".join(found)}) from None


def raising(check: Callable[[Any], str], spelled: Callable[[str], str] = str) -> Callable[[Any], Any]:
    """A pydantic validator from a ``check(value) -> problem or ""`` declared with the setting; ``spelled``
    rewrites the problem for its reader (the stack file spells the fields it names in camelCase)."""

    def validate(value: Any) -> Any:
        problem = check(value)
        if problem:
            raise ValueError(spelled(problem))
        return value

    return validate


# --------------------------------------------------------------------------- the validator of a dataclass

# Built at runtime from the dataclasses' fields, which mypy does not follow.
_TypedDict: Any = typing_extensions.TypedDict
_NotRequired: Any = typing_extensions.NotRequired
_Union: Any = Union


def _dataclass(cls: type) -> Any:
    """What pydantic validates for dataclass ``cls``: a ``cls`` or a mapping of its fields, each field
    as :func:`_validated_as` its annotation with its declared checks, then ``cls`` built and its rules
    run. Fields left out of a mapping keep the dataclass's defaults."""
    hints = type_hints(cls, include_extras=True)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        checks = declared_checks(f)
        annotation = _validated_as(hints[f.name])
        annotation = Annotated[(annotation, *checks)] if checks else annotation
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        fields[f.name] = annotation if required else _NotRequired[annotation]
    typed = _TypedDict(cls.__name__, fields)
    typed.__pydantic_config__ = ConfigDict(extra="forbid")
    return Annotated[typed, BeforeValidator(functools.partial(_fields_of, cls)), AfterValidator(_built(cls))]


def _fields_of(cls: type, value: Any) -> Any:
    if isinstance(value, cls):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(cls) if f.init}
    if isinstance(value, collections.abc.Mapping):
        return value
    raise PydanticCustomError("dataclass_type", "must be a {name} or a mapping of its fields", {"name": cls.__name__})


def _built(cls: type) -> Callable[[dict[str, Any]], Any]:
    def build(fields: dict[str, Any]) -> Any:
        built = cls(**fields)
        rules = getattr(built, "problems", None)
        found: list[str] = rules() if callable(rules) else []
        if found:
            raise PydanticCustomError("rules", "{rules}", {"rules": "\n".join(found)})
        return built

    return build


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


_STRICT: dict[Any, Any] = {
    str: Annotated[str, Strict()],
    bool: Annotated[bool, Strict()],
    float: Annotated[float, Strict()],
    int: Annotated[int, BeforeValidator(_integral), Strict()],
}
"""Scalars as the components take them: no ``"yes"`` for a bool, no ``"8"`` for an int; an integral
float for an int (the component provider sends every number as a float); an int for a float."""


def _wiring(value: Any, handler: Callable[[Any], Any]) -> Any:
    return value if isinstance(value, pulumi.Output) else handler(value)


def _is_wiring(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return origin is collections.abc.Awaitable or (inspect.isclass(origin) and issubclass(origin, pulumi.Output))


def _validated_as(annotation: Any) -> Any:
    """The annotation pydantic validates for a field annotated ``annotation``: nested dataclasses as
    :func:`_dataclass`, scalars as :data:`_STRICT`, ``pulumi.Input[T]`` as ``T`` or any output,
    ``Sequence[T]`` as ``tuple[T, ...]``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is None:
        return _class(annotation)
    if origin is Union or origin is types.UnionType:
        return _union(args)
    if origin is Annotated:
        return Annotated[(_validated_as(args[0]), *annotation.__metadata__)]
    if origin is collections.abc.Sequence:
        # A tuple whatever sequence is given: the frozen dataclass is then hashable, and equal to one
        # built in Python however its sequences arrive (the component provider sends lists).
        return types.GenericAlias(tuple, (_validated_as(args[0]) if args else Any, ...))
    if origin is typing.Literal or not args:
        return annotation
    return origin[tuple(_validated_as(a) for a in args)]


def _class(annotation: Any) -> Any:
    if not isinstance(annotation, type):
        return annotation  # Any
    if annotation in _STRICT:
        return _STRICT[annotation]
    return _dataclass(annotation) if dataclasses.is_dataclass(annotation) else annotation


def _union(members: tuple[Any, ...]) -> Any:
    """A union of its members as validated; one with ``pulumi.Output`` members (``pulumi.Input[T]``)
    takes any output as it is."""
    plain = tuple(_validated_as(a) for a in members if not _is_wiring(a))
    union = _Union[plain]
    return Annotated[union, WrapValidator(_wiring)] if len(plain) < len(members) else union


# --------------------------------------------------------------------------- the messages


def problems_of(err: ValidationError, prefix: str, cls: type | None = None) -> list[str]:
    """One line per problem: the Python field path from ``prefix``, the value given and what it must be (a bound
    broken, with every bound that the field of dataclass ``cls`` declares)."""
    problems: list[str] = []
    for e in reported(err.errors(include_url=False)):
        at = prefix + "".join(_step(p) for p in e["loc"])
        kind = e["type"]
        if kind == "rules":
            problems += [f"{at}.{rule}" for rule in str(e["ctx"]["rules"]).split("\n")]
        elif kind == "missing":
            problems.append(f"{at}: required argument is missing")
        elif kind == "extra_forbidden":
            problems.append(f"{at}: unknown argument")
        elif kind == "unshown":
            problems.append(f"{at}: {e['msg']} ({UNSHOWN})")
        elif isinstance(e.get("input"), pulumi.Output):
            problems.append(f"{at} is a pulumi Output: {OUTPUT_REFUSED}")
        else:
            declared = _declared_bounds(cls, e["loc"]) if cls is not None else {}
            remedy = _dataclass_remedy(cls, e) if cls is not None else ""
            problems.append(f"{at} = {_shown(e['input'])}: {_message(e, declared)}{remedy}")
    return problems


def empty_remedy(err: Mapping[str, Any], annotation: Any, optional: bool) -> str:
    """What to write in place of an empty sequence refused (pydantic's ``too_short`` with nothing given; ``""`` for
    any other error): the choices where its items are an Enum, and that leaving it out is valid where the setting is
    optional (new-user review of the capacity fallback, m2: ``fallback = []`` named no remedy)."""
    if err["type"] != "too_short" or err.get("input"):
        return ""
    found = _type_in(annotation, lambda t: issubclass(t, enum.Enum))
    choices = [repr(str(m.value)) for m in typing.cast("type[enum.Enum]", found or ())]
    listed = f": one or more of {', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else ""
    return listed + ("; or leave it out, for none" if optional else "")


def _dataclass_remedy(cls: type, err: Mapping[str, Any]) -> str:
    """:func:`empty_remedy` for the field of dataclass ``cls`` at the error's location (a top-level field)."""
    loc = tuple(err["loc"])
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    if len(loc) != 1 or loc[0] not in fields:
        return ""
    field = fields[str(loc[0])]
    optional = field.default is None or field.default_factory is not dataclasses.MISSING
    return empty_remedy(err, type_hints(cls)[field.name], optional)


def reported(errors: Sequence[Any]) -> list[Any]:
    """Pydantic's ``errors`` but a sequence's length refused after one of its items was: pydantic counts only the valid
    items, so ``fallback = ['queued']`` also read "must have at least 1 item" (new-user review of the capacity
    fallback, m1)."""
    items = [tuple(e["loc"]) for e in errors]
    return [
        e
        for e in errors
        if not (
            e["type"] == "too_short"
            and any(len(i) > len(e["loc"]) and i[: len(e["loc"])] == tuple(e["loc"]) for i in items)
        )
    ]


OUTPUT_REFUSED = (  # library review 6, m13: the message printed the Output's repr
    "this argument takes a plain value, known when the program runs; pass the value itself, "
    "e.g. the name you gave the other component's arguments, not the Output of its resource"
)


def _step(part: int | str) -> str:
    """A step of a field path: ``[2]`` (an item), ``.name`` (a field or a mapping's key), ``[key]`` (the key itself)."""
    return f"[{part}]" if isinstance(part, int) else part if part == "[key]" else f".{part}"


def _message(e: Any, declared: Mapping[str, Any] | None = None) -> str:
    return bound_message(e, declared or {}) or plain_message(e)


_PLAIN: Mapping[str, str] = {
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "string_type": "must be text (a string)",
    "dict_type": "must be a mapping of its keys (a YAML block, or a dict)",
    "model_type": "must be a mapping of its keys (a YAML block, or a dict)",
    "model_attributes_type": "must be a mapping of its keys (a YAML block, or a dict)",
}
"""Our words for pydantic's type errors, which name no valid value or name its classes ("Input should be a valid
dictionary or instance of ClusterConfig"): new-user review, issue point 6, no raw pydantic wording."""


def plain_message(e: Any) -> str:
    """What a value must be, for pydantic's error ``e``, in this library's words: its own message for a check of
    ours (``Value error, ...``), else the type's (:data:`_PLAIN`), a choice's valid values, or a sequence's."""
    kind, msg = e["type"], str(e["msg"])
    if kind in _PLAIN:
        return _PLAIN[kind]
    if kind in ("enum", "literal_error"):
        return f"must be one of {(e.get('ctx') or {}).get('expected', '')}".rstrip()
    if kind == "sequence_str":  # a Sequence given one string (new-user review 16, m2)
        return "must be a sequence (a list or a tuple), not a string: write [" + str(e.get("input")) + "]"
    if kind in ("tuple_type", "list_type"):
        return "must be a sequence (a list or a tuple)" + (", not a string" if isinstance(e.get("input"), str) else "")
    return msg.removeprefix("Value error, ").replace("Input should be ", "must be ", 1)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- bounds, in the project's words

_NUMBER_BOUNDS = {"greater_than": "gt", "greater_than_equal": "ge", "less_than": "lt", "less_than_equal": "le"}
_LENGTH_BOUNDS = ("too_short", "too_long", "string_too_short", "string_too_long")


def bound_message(e: Mapping[str, Any], declared: Mapping[str, Any]) -> str:
    """What a value outside a declared bound must be, for pydantic's error ``e`` ("Input should be less than or equal
    to 0.98" named neither the other bound nor a range): every bound the field declares (``declared``: its ``ge``,
    ``gt``, ``le``, ``lt``, ``min_length``, ``max_length``, where the caller knows the field) and the one broken
    (pydantic's ``ctx``); the pattern a text must match. ``""`` for any other error. Both the stack file's messages
    and the components' use it (:func:`tpu_serving.config.errors.describe`, :func:`problems_of`)."""
    kind, ctx = e["type"], dict(e.get("ctx") or {})
    if kind == "string_pattern_mismatch":
        return f"must match the regular expression {ctx['pattern']}"
    if kind not in _NUMBER_BOUNDS and kind not in _LENGTH_BOUNDS:
        return ""
    bounds = {k: v for k, v in {**ctx, **declared}.items() if k in BOUNDS}
    if kind in _NUMBER_BOUNDS:
        return "must be " + _range(
            bounds, ("ge", "at least"), ("gt", "greater than"), ("le", "at most"), ("lt", "less than")
        )
    return _length("character" if kind.startswith("string") else "item", bounds)


def _length(unit: str, bounds: Mapping[str, Any]) -> str:
    """``must have from 1 to 63 characters``, or the one bound there is."""
    low, high = bounds.get("min_length"), bounds.get("max_length")
    if low is not None and high is not None:
        return f"must have from {low} to {high} {unit}s"
    count = low if low is not None else high
    return f"must have at {'least' if low is not None else 'most'} {count} {unit}{'s' if count != 1 else ''}"


def _range(bounds: Mapping[str, Any], *words: tuple[str, str]) -> str:
    """``from 0.1 to 0.98`` for both inclusive bounds, else each bound in words (``greater than 0 and at most 9``)."""
    if "ge" in bounds and "le" in bounds:
        return f"from {bounds['ge']} to {bounds['le']}"
    return " and ".join(f"{text} {bounds[key]}" for key, text in words if key in bounds)


def bounds_of(metadata: Any) -> dict[str, Any]:
    """The bounds among a pydantic field's ``metadata`` (``Ge(ge=0.1)``, ``MaxLen(max_length=63)``...) by name."""
    return {k: getattr(m, k) for m in metadata for k in BOUNDS if k != "pattern" and hasattr(m, k)}


def _declared_bounds(cls: type, loc: tuple[Any, ...]) -> Mapping[str, Any]:
    """The bounds that the field at ``loc`` of dataclass ``cls`` declares (nested dataclasses followed), or none."""
    current: Any = cls
    found: Mapping[str, Any] = {}
    for part in loc:
        fields = {f.name: f for f in dataclasses.fields(current)} if dataclasses.is_dataclass(current) else {}
        if isinstance(part, int) or part not in fields:
            found = {}
            continue
        found = fields[part].metadata.get("bounds") or {}
        current = _dataclass_in(type_hints(current)[part])
    return found


def _dataclass_in(annotation: Any) -> type | None:
    """The dataclass an annotation holds (``X``, ``X | None``, ``Sequence[X]``), if any."""
    return _type_in(annotation, dataclasses.is_dataclass)


def _type_in(annotation: Any, wanted: Callable[[type], bool]) -> type | None:
    """The first class an annotation holds (``X``, ``X | None``, ``Sequence[X]``) that is ``wanted``, if any."""
    if isinstance(annotation, type) and wanted(annotation):
        return annotation
    return next((d for a in typing.get_args(annotation) if (d := _type_in(a, wanted)) is not None), None)
