"""A rollout that changes the names a vLLM serving answers to (``--served-model-name``): said in the preview diff
(SRE review 32, M1). vLLM answers 404 to a request whose ``model`` is none of its served names; a rollout replaces the
groups one at a time over hours, so a name dropped by the change is answered by the groups not yet rolled only, and a
name added only by the rolled ones. ``servedModelAliases`` serves both names for the transition."""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from typing import Any

FLAG = "--served-model-name"
SERVING_KINDS = ("LeaderWorkerSet", "DisaggregatedSet")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def served_names(resource: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the first ``--served-model-name`` in the resource's container commands: ``--flag=name``, or the
    flag followed by its names (up to the next flag or the end of the command)."""
    for text in _strings(resource.get("inputs") or {}):
        if FLAG not in text:
            continue
        try:
            words = shlex.split(text)
        except ValueError:
            continue
        for i, word in enumerate(words):
            if word.startswith(f"{FLAG}="):
                return (word.split("=", 1)[1],)
            if word == FLAG:
                names = []
                for after in words[i + 1 :]:
                    if after.startswith("-") or after in ("&&", ";", "|"):
                        break
                    names.append(after)
                return tuple(names)
    return ()


def cautions(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One caution per serving (by URN, in both plans) whose served names lose one in the change."""
    out = []
    for urn in sorted(set(old) & set(new)):
        kind = (new[urn].get("inputs") or {}).get("kind")
        if kind not in SERVING_KINDS:
            continue
        before, after = served_names(old[urn]), served_names(new[urn])
        dropped = [n for n in before if n not in after]
        if not before or not after or not dropped:
            continue
        meta = (new[urn].get("inputs") or {}).get("metadata") or {}
        out.append(
            f"{kind} {meta.get('namespace')}/{meta.get('name')} stops answering {', '.join(dropped)} (served names "
            f"{', '.join(before)} -> {', '.join(after)}): until its last group is rolled, a request naming "
            f"{dropped[0]} gets 404 from the rolled groups, and one naming {after[0]} gets 404 from the others; the "
            f"serving probe asks for {after[0]} at once. Serve both first: add {after[0]} to servedModelAliases, roll, "
            "move the clients, then rename (docs/upgrade.md, 'Renaming the served model')"
        )
    return out
