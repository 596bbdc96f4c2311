"""The stack file's settings reference, generated from the settings models (declared once).

``python -m tpu_serving_tools.docgen.settings_tables [--check]`` rewrites (or checks) every block of
``docs/reference/settings.md`` between ``<!-- generated: settings <name> -->`` and ``<!-- end generated -->``:
``stack`` (the stack file's keys outside ``serving``) and one per serving backend. Each row
is a key path as the stack file spells it, its type, its default, its bounds and its
description, all read from the pydantic models, so a default changed in the code changes
the page, and a test fails until it is regenerated (``make readme``).
"""

from __future__ import annotations

import collections.abc
import enum
import html
import json
import re
import sys
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from tpu_serving_tools.cli import command_parser

PAGE = Path("docs/reference/settings.md")
"""The page that holds the settings tables, from the repository's root."""

BLOCK = re.compile(r"(<!-- generated: settings (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


@dataclass(frozen=True)
class Row:
    """One setting: its key path, type, default, bounds and description."""

    key: str
    type: str
    default: str
    bounds: str
    description: str


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models(a)]


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (Union, getattr(__import__("types"), "UnionType", Union)):
        return any(_is_list(a) for a in typing.get_args(annotation) if a is not type(None))
    return origin is list


def type_text(annotation: Any) -> str:
    """A short human name of a field's type."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_text(args[0])
    if origin is Literal:
        return " / ".join(f"`{a}`" for a in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " / ".join(f"`{m.value}`" for m in annotation)
    if origin in (Union, getattr(__import__("types"), "UnionType", Union)):
        return " or ".join(type_text(a) for a in args if a is not type(None))
    if origin in (list, tuple, collections.abc.Sequence):
        return f"list of {type_text(args[0])}"
    if origin is dict:
        return "map"
    return {str: "string", int: "integer", float: "number", bool: "bool"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def default_text(field: FieldInfo) -> str:
    """``required``, ``unset``, or the default as the stack file would spell it."""
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{json.dumps(value)}`" if not isinstance(value, str) else f"`{value}`"


def bounds_text(field: FieldInfo) -> str:
    """``>= 1, <= 64``, ``at least 1 item``, ``pattern ...`` from the field's constraints."""
    parts = []
    for m in field.metadata:
        for attr, text in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if isinstance(m, getattr(annotated_types, attr.capitalize())):
                parts.append(f"{text} {getattr(m, attr)}")
        if isinstance(m, annotated_types.MinLen):
            parts.append(f"at least {m.min_length}")
        if getattr(m, "pattern", None):
            parts.append(f"pattern `{m.pattern}`")
    return ", ".join(parts)


def rows(
    model: type[BaseModel], prefix: str = "", *, skip: tuple[str, ...] = (), keys: dict[str, str] | None = None
) -> Iterator[Row]:
    """Every leaf setting of ``model``, nested models flattened into dotted key paths."""
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        key = (keys or {}).get(name) or prefix + (field.alias or name)
        nested = _models(field.annotation)
        if len(nested) == 1:
            yield from rows(nested[0], key + ("[]." if _is_list(field.annotation) else "."))
            continue
        yield Row(key, type_text(field.annotation), default_text(field), bounds_text(field), field.description or "")


def table(model_rows: Iterator[Row], first: str = "key") -> str:
    """A Markdown table of the rows; ``first`` heads the column of their keys."""
    lines = [f"| {first} | type | default | bounds | meaning |", "|---|---|---|---|---|"]
    for r in model_rows:
        lines.append(table_row([f"`{r.key}`", r.type, r.default, r.bounds, r.description]))
    return "\n".join(lines) + "\n"


_CODE_WITH_PIPE = re.compile(r"`([^`]*\|[^`]*)`")


def table_row(cells: list[str]) -> str:
    """One Markdown table row. A pipe in a cell is escaped; inside a code span it is written as HTML
    (``<code>a &#124; b</code>``), since a backslash there would be shown by MkDocs' Markdown as it is."""

    def code(m: re.Match[str]) -> str:
        return "<code>" + html.escape(m.group(1), quote=False).replace("|", "&#124;") + "</code>"

    return "| " + " | ".join(_CODE_WITH_PIPE.sub(code, c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def tables() -> dict[str, str]:
    """Block name -> generated table: ``stack`` and one per serving backend."""
    from tpu_serving.backends import BACKENDS
    from tpu_serving.config import GCP_KEYS, StackConfig

    out = {"stack": table(rows(StackConfig, skip=("serving",), keys=dict(GCP_KEYS)))}
    for name, backend in BACKENDS.items():
        out[name] = table(rows(backend.settings, "serving."))
    return out


def render(page: str) -> str:
    """``page`` with every generated block replaced by its current table."""
    current = tables()

    def replace(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in current:
            raise SystemExit(f"block `settings {name}` names no settings table; have: {', '.join(current)}")
        return m.group(1) + current[name] + m.group(4)

    return BLOCK.sub(replace, page)


def main(argv: list[str] | None = None) -> int:
    return page_command(argv, __doc__, PAGE, render, lambda new: f"{len(BLOCK.findall(new))} settings table(s)")


def page_command(
    argv: list[str] | None, doc: str | None, page: Path, render: Callable[[str], str], what: Callable[[str], str]
) -> int:
    """The command line of a generated page: ``render`` the page (``--page``, default ``page``) and write it, or
    with ``--check`` exit 1 if it is not current; ``what(new text)`` names its generated blocks."""
    parser = command_parser(__name__, doc)
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is not current")
    parser.add_argument("--page", type=Path, default=page)
    args = parser.parse_args(argv)
    new = render(args.page.read_text())
    return rewrite(args.page, new, check=args.check, what=what(new))


def rewrite(page: Path, new: str, *, check: bool, what: str) -> int:
    """Write ``new`` to ``page`` (or, with ``check``, exit status 1 if it differs); ``what`` names the blocks."""
    if check:
        if new != page.read_text():
            print(f"{page}: {what} stale; run `make readme`", file=sys.stderr)
            return 1
        return 0
    page.write_text(new)
    print(f"wrote {what} in {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
