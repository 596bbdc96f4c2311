"""The components' Python API reference, generated from the components themselves (declared once).

``python -m tpu_serving_tools.docgen.api_reference [--check]`` rewrites (or checks) the block of
``docs/reference/components.md`` between ``<!-- generated: api -->`` and ``<!-- end generated -->``.
For every component the provider serves (:data:`tpu_serving.provider.COMPONENTS`, the public ones):
its docstring, its arguments (each field of its ``...Args`` dataclass: the Python type, the default,
the bounds and the description it declares with ``described(...)`` or as the field's docstring) and
its outputs (the attributes it annotates, with their docstrings, as the provider's schema reads them);
then every dataclass and enum those arguments take. A default or a description changed in the code
changes the page, and a test fails until it is regenerated (``make readme``).
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import Field

from tpu_serving_tools.docgen.settings_tables import Row, bounds_text, page_command, table, table_row

BLOCK = re.compile(r"(<!-- generated: api -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)
PAGE = Path("docs/reference/components.md")
"""The page that holds the generated block, from the repository's root."""

_ROLE = re.compile(r":[a-z]+:`(?P<tilde>~?)(?P<target>[^`]+)`")
_SHORT_MODULES = {"pulumi_gcp": "gcp", "pulumi_kubernetes": "k8s"}


def markdown(doc: str | None) -> str:
    """A docstring as Markdown: Sphinx roles and double backticks as code spans."""
    text = inspect.cleandoc(doc or "")

    def role(m: re.Match[str]) -> str:
        target = m.group("target")
        return f"`{target.rsplit('.', 1)[-1] if m.group('tilde') else target}`"

    return _ROLE.sub(role, text).replace("``", "`")


def one_line(doc: str | None) -> str:
    """A docstring as one Markdown line (a table cell)."""
    return " ".join(markdown(doc).split())


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (Union, types.UnionType)


def python_type(annotation: Any) -> str:
    """A field's type as a Python program spells it: ``Sequence[BucketGrant]``, ``Input[str] | None``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "None"
    if origin is typing.Annotated:
        return python_type(args[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if _is_union(annotation):
        awaited = [typing.get_args(a)[0] for a in args if typing.get_origin(a) is collections.abc.Awaitable]
        if awaited:  # pulumi.Input[T] is Union[T, Awaitable[T], Output[T]]
            optional = " | None" if type(None) in args else ""
            return f"Input[{python_type(awaited[0])}]{optional}"
        return " | ".join(python_type(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        inner = ", ".join("..." if a is Ellipsis else python_type(a) for a in args)
        return f"{name}[{inner}]"
    if isinstance(annotation, type):
        top = annotation.__module__.split(".")[0]
        if top in _SHORT_MODULES:  # pulumi_gcp.container.cluster.Cluster: gcp.container.Cluster
            module = annotation.__module__.split(".")
            package = ".".join([_SHORT_MODULES[top], *module[1:-1]])
            return f"{package}.{annotation.__name__}" if len(module) > 1 else annotation.__name__
        if top == "pulumi":
            return f"pulumi.{annotation.__name__}"
        return annotation.__name__
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    return str(annotation).replace("typing.", "")


def default_text(f: dataclasses.Field[Any]) -> str:
    """``required``, or the field's default as Python spells it."""
    if f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    elif f.default is dataclasses.MISSING:
        return "required"
    else:
        value = f.default
    if isinstance(value, enum.Enum):
        value = value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        same = value == type(value)()
        return f"`{type(value).__name__}()`" if same else f"`{type(value).__name__}(...)`"
    return f"`{value!r}`"


def _docstrings(cls: type) -> dict[str, str]:
    """The docstrings of ``cls``'s annotated attributes, read as the provider's schema reads them."""
    from pulumi.provider.experimental.analyzer import Analyzer

    analyzer = Analyzer("tpu-serving")
    return {name: analyzer.get_docstring(cls, name) or "" for name in inspect.get_annotations(cls)}


def _hints(cls: Any) -> dict[str, Any]:
    """The resolved annotations ``cls`` declares, with those of its dataclass bases (a settings dataclass that
    extends another, e.g. a backend's probes); not a component's other bases' (the SDK's)."""
    from tpu_serving.common.validation import type_hints

    hints: dict[str, Any] = {}
    bases: tuple[Any, ...] = getattr(cls, "__mro__", (cls,))
    for base in reversed(bases):
        if base is cls or (isinstance(base, type) and dataclasses.is_dataclass(base)):
            own = type(base.__name__, (), {"__annotations__": dict(inspect.get_annotations(base))})
            own.__module__ = base.__module__
            hints |= type_hints(own, include_extras=True)
    return hints


def argument_rows(cls: type) -> Iterator[Row]:
    """One row per field of the arguments dataclass ``cls``."""
    hints, docs = _hints(cls), _docstrings(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        bounds = bounds_text(Field(**(f.metadata.get("bounds") or {})))
        description = f.metadata.get("description") or docs.get(f.name, "")
        yield Row(f.name, f"`{python_type(hints[f.name])}`", default_text(f), bounds, one_line(description))


def _referenced(annotation: Any) -> Iterator[type]:
    """The library's dataclasses and enums inside a type annotation."""
    if isinstance(annotation, type):
        if annotation.__module__.startswith("tpu_serving") and (
            dataclasses.is_dataclass(annotation) or issubclass(annotation, enum.Enum)
        ):
            yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _referenced(arg)


def argument_types(classes: list[type]) -> list[type]:
    """Every dataclass and enum the argument classes take, directly or nested, in first-use order."""
    found: list[type] = []
    todo = list(classes)
    while todo:
        cls = todo.pop(0)
        if not dataclasses.is_dataclass(cls):
            continue
        for f in dataclasses.fields(cls):
            for t in _referenced(_hints(cls)[f.name]):
                if t not in found and t not in classes:
                    found.append(t)
                    todo.append(t)
    return found


def _outputs(component: type) -> str:
    hints, docs = _hints(component), _docstrings(component)
    lines = ["| output | type | meaning |", "|---|---|---|"]
    for name, doc in docs.items():
        lines.append(table_row([f"`{name}`", f"`{python_type(hints[name])}`", one_line(doc)]))
    return "\n".join(lines) + "\n"


def _arguments_class(component: type) -> type:
    return typing.cast(type, _hints(vars(component)["__init__"])["args"])


def component_section(component: type) -> str:
    """One component: its signature, docstring, arguments and outputs."""
    args = _arguments_class(component)
    token = f"tpu-serving:index:{component.__name__}"
    return (
        f"## `{component.__name__}`\n\n"
        f"`{component.__name__}(name: str, args: {args.__name__}, opts: pulumi.ResourceOptions | None = None)`, "
        f"resource type `{token}`, from `{component.__module__}`.\n\n"
        f"{markdown(component.__doc__)}\n\n"
        f"### `{args.__name__}`\n\n{markdown(args.__doc__)}\n\n"
        f"{table(argument_rows(args), first='argument')}\n"
        f"Outputs of `{component.__name__}`:\n\n{_outputs(component)}"
    )


def type_section(cls: type) -> str:
    """One argument type: a dataclass's fields, or an enum's values."""
    head = f"### `{cls.__name__}`\n\nFrom `{cls.__module__}`. {markdown(cls.__doc__)}\n\n"
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        docs = _docstrings(cls)
        values = [f"- `{m.value!r}`" + (f": {one_line(docs[m.name])}" if docs.get(m.name) else "") for m in cls]
        return head + "\n".join(values) + "\n"
    return head + table(argument_rows(cls), first="field")


def reference() -> str:
    """The generated block: every public component, then the types their arguments take."""
    from tpu_serving.provider import COMPONENTS

    arguments = [_arguments_class(c) for c in COMPONENTS]
    sections = [component_section(c) for c in COMPONENTS]
    sections.append("## Argument types\n\nThe dataclasses and enums the arguments above take, nested ones too.\n")
    sections += [type_section(t) for t in argument_types(arguments)]
    return "\n".join(sections)


def render(page: str) -> str:
    """``page`` with the generated block replaced by the current reference."""
    return BLOCK.sub(lambda m: m.group(1) + reference() + m.group(3), page)


def main(argv: list[str] | None = None) -> int:
    return page_command(argv, __doc__, PAGE, render, lambda new: "the components' API reference")


if __name__ == "__main__":
    sys.exit(main())
