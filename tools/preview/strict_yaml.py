"""Stack and project files read strictly: UTF-8, unique keys, bounded aliases.

PyYAML's ``safe_load`` keeps the last of two equal keys (a stack file with ``serving:`` twice silently loses
the first), reads any encoding Python guesses, and builds an alias-heavy document ("billion laughs") by
reference, which the config map then writes out in full. The rules here are YAML's:

- "each of the keys is unique" in a mapping (YAML 1.2.2, 3.2.1.1, https://yaml.org/spec/1.2.2/); which YAML
  library the Pulumi CLI reads stack files with, and what it does with a repeated key, is not read here:
  refusing is the answer that never loses a setting;
- a stack file is UTF-8 text (YAML 1.2.2, 5.2 allows UTF-8, UTF-16 and UTF-32; the files here are UTF-8);
- a document that expands to more than :data:`MAX_NODES` nodes through its aliases is refused.

Plain scalars resolve as the Pulumi CLI resolves them (:data:`RESOLVERS`): it reads stack files with
gopkg.in/yaml.v3 (pulumi/pulumi sdk/go/common/encoding), whose ``resolve.go`` follows YAML 1.2's core schema
(YAML 1.2.2, 10.3.2): only ``true`` and ``false`` (and their ``True``/``TRUE`` spellings) are booleans, so
``yes``, ``no``, ``on``, ``off``, ``y`` and ``n`` are text, as is a base-60 ``1:30``, while ``1e3`` is a
number. PyYAML's ``SafeLoader`` resolves YAML 1.1's: ``sandbox: yes`` reached the program as ``true`` in an
offline preview and as ``"yes"`` under ``pulumi up``. A timestamp stays text, the string the settings want
(yaml.v3 would decode ``2026-12-01`` as a time).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

MAX_NODES = 100_000
"""Nodes a document may expand to, aliases followed: far above any stack file, far below a billion laughs."""


class StrictYamlError(ValueError):
    """Why a file is not read: its path, the line, the rule."""


RESOLVERS: tuple[tuple[str, str, str], ...] = (
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("null", r"~|null|Null|NULL|", "~nN"),
    ("int", r"[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|0[0-7_]*|[1-9][0-9_]*)", "-+0123456789"),
    (
        "float",
        r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+0123456789.",
    ),
    ("merge", r"<<", "<"),
)
"""(tag, plain scalar, first characters) of the implicit tags, after yaml.v3's ``resolve``: its map of
``true``/``false``/``null`` spellings, then an integer as Go's ``strconv.ParseInt(text, 0, 64)`` reads it once
``_`` are dropped (``0b``, ``0o``, ``0x`` and a leading-zero octal), then a float matching its
``yamlStyleFloat``; anything else is a string. PyYAML's constructors then build the value (they read these
spellings alike)."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses a mapping with a repeated key and resolves plain scalars as the Pulumi CLI
    does (:data:`RESOLVERS`; a timestamp is text)."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: merged keys may be overridden
                continue
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping key must be a scalar, not {type(key).__name__}", key_node.start_mark
                )
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} appears twice (lines {seen[key]} and {line}); a key is unique",
                    key_node.start_mark,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


for _tag, _plain, _first in RESOLVERS:
    _UniqueKeyLoader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_plain})$"), [*_first, *([""] if _tag == "null" else [])]
    )


def _size(value: Any, budget: int) -> int:
    """Nodes of ``value`` with shared (aliased) parts counted each time, stopping past ``budget``."""
    count, todo = 0, [value]
    while todo and count <= budget:
        item = todo.pop()
        count += 1
        if isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return count


_READ: dict[str, Any] = {}
"""Documents read, by their text (at most :data:`_READ_KEPT`): a file read again unchanged is not parsed again. The
preview's summary, ``make check`` and the e2e run each read every stack file for each stack (the model stacks'
platforms, :func:`tpu_serving_tools.e2e.coverage.model_platforms`); PyYAML's parser, in Python, took about a
millisecond per kilobyte, a tenth of the fast suite's time."""
_READ_KEPT = 256


def load(path: Path, shown: str | None = None) -> Any:
    """The YAML document in ``path``, or :class:`StrictYamlError` naming ``shown`` (default: the path).

    A text read before gives a copy of the document it gave (nothing its caller changes reaches another's); only a
    document that passed every rule is kept, so a refused one is refused, with its message, each time."""
    name = shown or str(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise StrictYamlError(f"{name}: not UTF-8 text (byte 0x{raw[err.start]:02x} on line {line})") from None
    if text in _READ:
        return copy.deepcopy(_READ[text])
    doc = _parse(text, name)
    if len(_READ) >= _READ_KEPT:
        del _READ[next(iter(_READ))]
    _READ[text] = doc
    return copy.deepcopy(doc)


def _parse(text: str, name: str) -> Any:
    """The document in ``text``, held to the rules, or :class:`StrictYamlError` naming ``name``."""
    loader = _UniqueKeyLoader(text)
    loader.name = name  # the marks of its messages name the file, not "<unicode string>"
    try:
        doc = loader.get_single_data()
    except yaml.YAMLError as err:
        raise StrictYamlError(f"{name} is not valid YAML: {err}") from None
    finally:
        loader.dispose()
    if _size(doc, MAX_NODES) > MAX_NODES:
        raise StrictYamlError(f"{name}: more than {MAX_NODES} values, aliases followed (a stack file holds far fewer)")
    return doc
