"""The library's messages, held to a reviewed list: every error the library raises in a test is checked.

A refusal's wording is what a user reads: the key path, the bad value, the valid choices. Most tests check a
message by a fragment (``"serving.slice" in str(err)``), so a rewording, a dropped value or a wrong plural
passes them. This plugin records the full text of each error of the library (every ``pulumi.RunError``
raised from a ``tpu_serving`` module: ``ConfigError``, ``ArgumentsError``, ``CatalogError``) that a test
creates, and each problem that ``validation.argument_problems`` returns (the component checks' own answer, which
tests read without raising), and fails the test when the text is not in ``tests/golden_messages.txt``.

``make messages`` runs the suite recording instead, and rewrites the list: a changed message shows up as a
diff of that file in review, the old line beside the new. Texts are normalised first (temporary paths, the
checkout's path, object addresses), so the list holds for any checkout.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest

GOLDEN_MESSAGES = Path(__file__).resolve().parent / "golden_messages.txt"
"""One message per line, as a JSON string, sorted."""

RECORD = os.environ.get("TPU_SERVING_RECORD_MESSAGES", "")
"""A directory: record the messages there (one file per process) instead of checking them."""

_ROOT = str(Path(__file__).resolve().parent.parent)
_PARENT = str(Path(_ROOT).parent)
_PYTEST_TMP = (re.compile(r"(/private)?/tmp/pytest-of-[^\s'\":,)\]]+"), "<tmp>")
"""pytest's temporary paths (its basetemp, ``/tmp/pytest-of-<user>/...``), replaced before the checkout's parent: a
checkout directly under /tmp has /tmp as its parent (new-user review round 39, m1)."""
_NORMALISE = (
    (re.compile(r"0x[0-9a-f]{6,}"), "0x..."),
    (re.compile(r"(/private)?/tmp/[^\s'\":,)\]]+"), "<tmp>"),
)

_seen: list[str] = []


def normalise(text: str) -> str:
    """``text`` without what differs between checkouts and runs."""
    text = _PYTEST_TMP[0].sub(_PYTEST_TMP[1], text.replace(_ROOT, "<root>")).replace(_PARENT, "<root>/..")
    for pattern, replacement in _NORMALISE:
        text = pattern.sub(replacement, text)
    return text


def _from_library(error: BaseException) -> bool:
    module = type(error).__module__
    return module.startswith("tpu_serving.") and not module.startswith("tpu_serving_tools")


_original_init: Any = pulumi.RunError.__init__


def _recording_init(self: BaseException, *args: Any) -> None:
    _original_init(self, *args)
    if _from_library(self) and args and isinstance(args[0], str):
        _seen.append(normalise(args[0]))


_original_argument_problems: Any = None


def _recording_argument_problems(args: Any) -> list[str]:
    found: list[str] = _original_argument_problems(args)
    _seen.extend(normalise(p) for p in found)
    return found


def known() -> frozenset[str]:
    if not GOLDEN_MESSAGES.exists():
        return frozenset()
    return frozenset(json.loads(line) for line in GOLDEN_MESSAGES.read_text().splitlines() if line)


def runs_no_test(config: pytest.Config) -> bool:
    """Whether this process is pytest-xdist's controller, which hands the tests to its workers and runs none: it
    records nothing, so it does not import the library (about 2.5 s before the workers start; each worker patches
    its own)."""
    distributed = config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None))
    return distributed and not hasattr(config, "workerinput") and not config.getoption("collectonly")


def pytest_configure(config: pytest.Config) -> None:
    """Record from here on; the test modules, imported later, get the recording ``argument_problems``."""
    global _original_argument_problems
    if runs_no_test(config):
        return
    from tpu_serving.common import validation

    pulumi.RunError.__init__ = _recording_init  # type: ignore[method-assign]
    _original_argument_problems = validation.argument_problems
    validation.argument_problems = _recording_argument_problems


def pytest_unconfigure(config: pytest.Config) -> None:
    if _original_argument_problems is None:  # never patched (runs_no_test)
        return
    from tpu_serving.common import validation

    pulumi.RunError.__init__ = _original_init  # type: ignore[method-assign]
    validation.argument_problems = _original_argument_problems


@pytest.fixture(autouse=True)
def _library_messages_are_known(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test on a message the list does not hold (the slow tests are not held: ``make messages`` runs
    the fast suite, as ``make test`` does)."""
    _seen.clear()
    yield
    texts, _seen[:] = list(_seen), []
    if request.node.get_closest_marker("slow"):
        return
    if RECORD:
        Path(RECORD).mkdir(parents=True, exist_ok=True)
        with (Path(RECORD) / f"{os.getpid()}.txt").open("a") as out:
            out.writelines(json.dumps(t) + "\n" for t in texts)
        return
    unknown = unknown_messages(texts)
    if unknown:
        pytest.fail(
            "a message of the library is not in tests/golden_messages.txt (if the change is meant, run "
            "`make messages` and review the file's diff):\n" + "\n".join(f"  {t!r}" for t in unknown),
            pytrace=False,
        )


_KNOWN = known()


def unknown_messages(texts: list[str], listed: frozenset[str] | None = None) -> list[str]:
    """The ``texts`` the list (by default :data:`GOLDEN_MESSAGES`) does not hold, sorted."""
    return sorted(set(texts) - (_KNOWN if listed is None else listed))


def merge(directory: Path) -> int:
    """Rewrite :data:`GOLDEN_MESSAGES` from the files a recording run left in ``directory``."""
    texts = {json.loads(line) for f in directory.glob("*.txt") for line in f.read_text().splitlines() if line}
    if not texts:
        print(f"no messages recorded in {directory}: nothing written")
        return 1
    before = known()
    GOLDEN_MESSAGES.write_text("".join(json.dumps(t) + "\n" for t in sorted(texts)))
    print(f"{GOLDEN_MESSAGES.name}: {len(texts)} messages ({len(texts - before)} new, {len(before - texts)} gone)")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(merge(Path(sys.argv[1])))
