"""Components check their own arguments when constructed, and report every problem at once.

Each component's arguments are a frozen dataclass. :func:`check_arguments` compares every
field with its annotation (``str``, ``int``, ``bool``, ``tuple[X, ...]``, ``Sequence``,
``Mapping``, ``Literal``, ``Optional``, nested dataclasses; ``pulumi.Input`` fields accept
outputs as wiring) and adds the rules of the arguments class itself (its ``problems()``
method), then raises one :class:`ArgumentsError` naming each bad argument, its value and
what it must be. A string passed where a tuple of names is expected is refused, not iterated.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, Union

import pulumi

BOUNDS = ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern")
"""Constraints a setting may declare once, for both the stack file and the component's arguments."""


def bound_problems(value: Any, bounds: dict[str, Any]) -> str:
    """Why ``value`` breaks ``bounds`` (as :func:`described` records them), or ``""``."""
    checks: dict[str, tuple[Callable[[Any, Any], bool], str]] = {
        "ge": (lambda v, b: v >= b, ">= {}"),
        "gt": (lambda v, b: v > b, "> {}"),
        "le": (lambda v, b: v <= b, "<= {}"),
        "lt": (lambda v, b: v < b, "< {}"),
        "min_length": (lambda v, b: len(v) >= b, "at least {} long"),
        "max_length": (lambda v, b: len(v) <= b, "at most {} long"),
    }
    if value is None:
        return ""
    broken = [checks[k][1].format(b) for k, b in bounds.items() if k in checks and not checks[k][0](value, b)]
    pattern = bounds.get("pattern")
    if pattern is not None and isinstance(value, str) and not re.search(pattern, value):
        broken.append(f"matching {pattern}")
    return "must be " + " and ".join(broken) if broken else ""


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


_Args = typing.TypeVar("_Args")


def check_arguments(component: str, args: Any, cls: type[_Args]) -> _Args:
    """``args`` as a ``cls``, or :class:`ArgumentsError` if any field breaks its type or a rule.

    From Python, ``args`` is a ``cls`` already. Through the component provider (TypeScript,
    Go, YAML programs) it arrives as a mapping with the fields' names, which is rebuilt into
    ``cls`` first (:func:`from_wire`).
    """
    if isinstance(args, collections.abc.Mapping):
        args = from_wire(cls, args)
    problems = argument_problems(args)
    if problems:
        raise ArgumentsError(component, problems)
    return typing.cast(_Args, args)


def from_wire(annotation: Any, value: Any) -> Any:
    """A value as the component provider passes it (mappings, lists, floats) rebuilt as ``annotation``."""
    if value is None or isinstance(value, pulumi.Output):
        return value
    origin, params = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Union or origin is types.UnionType:
        plain = [a for a in params if a is not type(None) and not _is_wiring(a)]
        return from_wire(plain[0], value) if len(plain) == 1 else value
    if (
        isinstance(annotation, type)
        and dataclasses.is_dataclass(annotation)
        and isinstance(value, collections.abc.Mapping)
    ):
        hints = type_hints(annotation)
        names = {f.name for f in dataclasses.fields(annotation) if f.init}
        return annotation(**{k: from_wire(hints[k], v) for k, v in value.items() if k in names and v is not None})
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if origin in (tuple, collections.abc.Sequence, list) and isinstance(value, (list, tuple)):
        item = params[0] if params else Any
        return tuple(from_wire(item, v) for v in value)
    if origin in (collections.abc.Mapping, dict) and isinstance(value, collections.abc.Mapping):
        return {k: from_wire(params[1] if params else Any, v) for k, v in value.items()}
    return value


def type_hints(cls: type, *, include_extras: bool = False) -> dict[str, Any]:
    """``cls``'s resolved annotations; ``pulumi.Input[T]`` names ``Output[T]`` as a forward reference,
    which is resolved in the SDK's own module."""
    return typing.get_type_hints(
        cls, globalns={**vars(pulumi.output), **vars(sys.modules[cls.__module__])}, include_extras=include_extras
    )


def argument_problems(args: Any, prefix: str = "") -> list[str]:
    """Every problem of dataclass ``args``: type mismatches (nested dataclasses too) and its own rules."""
    cls = type(args)
    prefix = prefix or cls.__name__
    hints = type_hints(cls)
    problems: list[str] = []
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        at = f"{prefix}.{f.name}"
        expected = _mismatch(value, hints[f.name])
        check = f.metadata.get("check")
        broken = (
            "" if expected else bound_problems(value, f.metadata.get("bounds") or {}) or (check(value) if check else "")
        )
        if expected:
            problems.append(f"{at} = {_shown(value)}: expected {expected}")
        elif broken:
            problems.append(f"{at} = {_shown(value)}: {broken}")
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            problems += argument_problems(value, at)
    rules = getattr(args, "problems", None)
    if callable(rules):
        problems += [f"{prefix}.{p}" for p in rules()]
    return problems


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_wiring(arg: Any) -> bool:
    origin = typing.get_origin(arg) or arg
    return origin in (collections.abc.Awaitable, pulumi.Output) or (
        inspect.isclass(origin) and issubclass(origin, pulumi.Output)
    )


def _mismatch(value: Any, annotation: Any) -> str:
    """What ``value`` should have been, or ``""`` if it matches ``annotation``."""
    if annotation is Any:
        return ""
    origin, params = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Union or origin is types.UnionType:
        if any(_is_wiring(a) for a in params) and isinstance(value, pulumi.Output):
            return ""  # a pulumi.Input given as another resource's output
        if any(not _mismatch(value, a) for a in params if not _is_wiring(a)):
            return ""
        return " or ".join(_describe(a) for a in params if not _is_wiring(a))
    if origin is typing.Literal:
        return "" if value in params else "one of " + ", ".join(repr(p) for p in params)
    if origin is typing.Annotated:
        return _mismatch(value, params[0])
    if origin is tuple:
        if not isinstance(value, tuple):
            return _describe(annotation)
        item = params[0] if params else Any
        return next((_describe(annotation) for v in value if _mismatch(v, item)), "")
    if origin in (collections.abc.Sequence, list):
        if isinstance(value, (str, bytes)) or not isinstance(value, collections.abc.Sequence):
            return _describe(annotation)
        item = params[0] if params else Any
        return next((_describe(annotation) for v in value if _mismatch(v, item)), "")
    if origin in (collections.abc.Mapping, dict):
        if not isinstance(value, collections.abc.Mapping):
            return _describe(annotation)
        key, val = params if params else (Any, Any)
        bad = any(_mismatch(k, key) or _mismatch(v, val) for k, v in value.items())
        return _describe(annotation) if bad else ""
    if annotation is type(None):
        return "" if value is None else "None"
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation]
        return "" if value in values else "one of " + ", ".join(repr(v) for v in values)
    if inspect.isclass(annotation):
        if annotation is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif annotation is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, annotation)
        return "" if ok else _describe(annotation)
    return ""


def _describe(annotation: Any) -> str:
    origin, params = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is tuple:
        return f"a tuple of {_describe(params[0])}" if params else "a tuple"
    if origin in (collections.abc.Sequence, list):
        return f"a sequence (not a string) of {_describe(params[0])}" if params else "a sequence"
    if origin in (collections.abc.Mapping, dict):
        return f"a mapping of {_describe(params[0])} to {_describe(params[1])}" if params else "a mapping"
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(p) for p in params)
    if origin is Union or origin is types.UnionType:
        return " or ".join(_describe(a) for a in params if not _is_wiring(a))
    return getattr(annotation, "__name__", str(annotation))
