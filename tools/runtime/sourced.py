"""The runtime model's facts as data: each fact a value with its source, in ``tools/runtime/data/<table>.json``.

A table is ``{"about": ..., "facts": {NAME: {"value": ..., "source": ...}}}``. The fact modules
(:mod:`.facts`, :mod:`.gcp_facts`, :mod:`.machine_facts`, :mod:`.ds_facts`, :mod:`.engine_facts`) give each fact
its Python name and type and read it from here, so a value and its source live together in one place, and the
modules hold only what the model computes from them. A fact without a source, a value of the wrong type, or a
name that is not in its table fails at import; a fact that no module reads is found by
``tests/tools/runtime/test_sourced.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

DATA = Path(__file__).parent / "data"

T = TypeVar("T")


class FactError(ValueError):
    """A table or a fact that breaks the rules above."""


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def _adapter(kind: type[T]) -> TypeAdapter[T]:
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


class Table:
    """One table of sourced facts; it remembers which facts were read."""

    def __init__(self, name: str, folder: Path | None = None) -> None:
        self.name = name
        self.path = (folder or DATA) / f"{name}.json"
        doc = json.loads(self.path.read_text())
        if not isinstance(doc, dict) or not str(doc.get("about", "")).strip() or not isinstance(doc.get("facts"), dict):
            raise FactError(f"{self.path}: needs an `about` and a `facts` object")
        bad = [k for k, v in doc["facts"].items() if not is_sourced(v)]
        if bad:
            raise FactError(f"{self.path}: facts need a value and a non-empty source: {', '.join(bad)}")
        self.about: str = doc["about"]
        self.facts: dict[str, dict[str, Any]] = doc["facts"]
        self.read: set[str] = set()

    def source(self, key: str) -> str:
        """Where the fact ``key`` was read."""
        return str(self._entry(key)["source"])

    def get(self, key: str, kind: type[T]) -> T:
        """The value of ``key``, validated as ``kind`` (JSON lists become tuples or frozensets when ``kind`` says)."""
        value = self._entry(key)["value"]
        try:
            found: T = _adapter(kind).validate_python(value)
        except ValidationError as e:
            raise FactError(f"{self.path}: {key} is not a {kind}: {e.errors()[0]['msg']}") from None
        self.read.add(key)
        return found

    def text(self, key: str) -> str:
        return self.get(key, str)

    def integer(self, key: str) -> int:
        return self.get(key, int)

    def unread(self) -> list[str]:
        """Facts of the table that nothing has read (after every module that reads it was imported)."""
        return sorted(set(self.facts) - self.read)

    def _entry(self, key: str) -> dict[str, Any]:
        if key not in self.facts:
            raise FactError(f"{self.path}: no fact {key} (the table has {len(self.facts)})")
        return self.facts[key]


def is_sourced(entry: Any) -> bool:
    """An entry with a value and a non-empty source: a fact of a table here, or of a backend's runtime_facts.json."""
    return isinstance(entry, dict) and "value" in entry and bool(str(entry.get("source", "")).strip())


TABLES: dict[str, Table] = {}


def table(name: str) -> Table:
    """The table ``data/<name>.json``, loaded once."""
    if name not in TABLES:
        TABLES[name] = Table(name)
    return TABLES[name]
