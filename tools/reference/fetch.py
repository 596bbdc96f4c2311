"""``make reference`` and ``make reference-check``: the reference files the tests read, fetched and checked by sha256.

``python -m tpu_serving_tools.reference.fetch [--check] [--dir DIR]`` goes through every file of
:data:`tpu_serving_tools.reference.sources.SOURCES` in the reference folder (``--dir``, else ``$TPU_SERVING_REFERENCE``,
else ``../shared/reference``):

- a file that is there is checked: its sha256 must be the recorded one;
- a missing file with an upstream is fetched (not with ``--check``): from the Go module proxy when its repository is
  a Go module (``$GOPROXY``, default https://proxy.golang.org: ``<proxy>/<module>/@v/<version>.zip``, the module path
  and version case-encoded, each upper-case letter as ``!`` and its lower case, https://go.dev/ref/mod#goproxy-protocol;
  the file is read from the zip at ``<module>@<version>/<path>``), else, or when the proxy does not serve it, from its
  raw.githubusercontent.com URL. Fetched bytes whose sha256 differs are refused and not written;
- a missing file no upstream publishes (the seeds' manifests) is named with where to copy it from and which tests
  read it.

Every problem is reported at once; the command exits 1 when there is any, 0 when every file is there and matches.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tpu_serving_tools.reference.sources import (
    SOURCES,
    WITHOUT_SEEDS_ENV,
    Fetched,
    GoModule,
    Unpublished,
    reference_dir,
)

DEFAULT_PROXY = "https://proxy.golang.org"
"""The Go module proxy when ``$GOPROXY`` is unset or empty (Go's own default: https://go.dev/ref/mod#environment-variables)."""
TIMEOUT = 120
"""Seconds to wait on a connection (the largest module zip, prometheus-engine v0.17.2, is 91 MB)."""


class FetchError(Exception):
    """A route that did not give the file, with why."""


def escape(path: str) -> str:
    """A module path or version as the proxy protocol spells it: ``A`` becomes ``!a`` (go.dev/ref/mod#goproxy-protocol)."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in path)


def proxies(goproxy: str | None) -> list[str]:
    """The proxy URLs of a ``GOPROXY`` value, in order: its entries up to ``direct`` or ``off``, which name no proxy
    (entries are separated by ``,`` or ``|``; unset or empty is Go's default, https://proxy.golang.org)."""
    found: list[str] = []
    for entry in re.split(r"[,|]", goproxy or DEFAULT_PROXY):
        entry = entry.strip()
        if entry in ("direct", "off"):
            break
        if entry:
            found.append(entry.rstrip("/"))
    return found


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(url: str, to: Path) -> None:
    """``url`` into the file ``to``; a failure is a :class:`FetchError` with the status and the server's first line."""
    request = urllib.request.Request(url, headers={"User-Agent": "tpu-serving-reference"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response, to.open("wb") as out:
            shutil.copyfileobj(response, out)
    except urllib.error.HTTPError as err:
        body = err.read().decode(errors="replace").strip().splitlines()
        raise FetchError(f"{url}: {err.code} {err.reason}" + (f" ({body[0]})" if body else "")) from None
    except (urllib.error.URLError, OSError) as err:
        raise FetchError(f"{url}: {getattr(err, 'reason', err)}") from None


class Fetcher:
    """Fetches reference files into memory; each module zip is downloaded once into ``work``."""

    def __init__(self, work: Path, goproxy: str | None = None) -> None:
        self.work = work
        self.proxies = proxies(goproxy)
        self._zips: dict[tuple[str, str], Path | FetchError] = {}

    def _zip(self, module: GoModule) -> Path:
        key = (module.module, module.version)
        if key not in self._zips:
            self._zips[key] = self._download_zip(module)
        found = self._zips[key]
        if isinstance(found, FetchError):
            raise found
        return found

    def _download_zip(self, module: GoModule) -> Path | FetchError:
        if not self.proxies:
            return FetchError(f"{module.module}@{module.version}: GOPROXY names no proxy")
        errors: list[str] = []
        for proxy in self.proxies:
            to = self.work / f"{len(self._zips)}-{len(errors)}.zip"
            try:
                _download(f"{proxy}/{escape(module.module)}/@v/{escape(module.version)}.zip", to)
                return to
            except FetchError as err:
                errors.append(str(err))
        return FetchError("; ".join(errors))

    def module_file(self, module: GoModule) -> bytes:
        """The file's bytes from the module's zip, through the proxies of ``GOPROXY``."""
        member = f"{module.module}@{module.version}/{module.file}"
        with zipfile.ZipFile(self._zip(module)) as archive:
            try:
                return archive.read(member)
            except KeyError:
                raise FetchError(f"{module.module}@{module.version}'s zip holds no {module.file}") from None

    def url_file(self, url: str) -> bytes:
        to = self.work / "file"
        _download(url, to)
        return to.read_bytes()

    def fetch(self, source: Fetched) -> tuple[bytes, str]:
        """(bytes, where from): the module proxy first when the file is in a Go module, then its URL."""
        errors: list[str] = []
        if source.module is not None:
            try:
                m = source.module
                return self.module_file(m), f"Go module proxy, {m.module}@{m.version}/{m.file}"
            except FetchError as err:
                errors.append(str(err))
        try:
            return self.url_file(source.url), source.url
        except FetchError as err:
            errors.append(str(err))
        raise FetchError("; ".join(errors))


@dataclass(frozen=True)
class Outcome:
    """What became of one reference file: ``problem`` is False when it is there and matches, or is a seed's
    manifest the checkout goes without (``waived``)."""

    name: str
    text: str
    problem: bool
    waived: bool = False


def _readers(source: Fetched | Unpublished) -> str:
    return f"; read by {', '.join(source.read_by)}" if source.read_by else ""


def _route(source: Fetched | Unpublished) -> str:
    """Where a missing file comes from."""
    if isinstance(source, Unpublished):
        return (
            f"not published as a file: copy it from {source.origin}; a fork without that repository: WITHOUT_SEEDS=1"
            " on make reference, make reference-check and make test goes without the seeds (their tests skipped)"
        )
    module = source.module
    via = f"the Go module proxy ({module.module}@{module.version}), else " if module else ""
    return f"make reference fetches it from {via}{source.url}"


def _present(source: Fetched | Unpublished, data: bytes) -> Outcome:
    got = sha256(data)
    if got == source.sha256:
        return Outcome(source.name, "present, sha256 matches", False)
    fix = "delete it and run make reference" if isinstance(source, Fetched) else _route(source)
    return Outcome(source.name, f"sha256 differs: expected {source.sha256}, got {got} ({fix}){_readers(source)}", True)


def _fetch(source: Fetched, path: Path, fetcher: Fetcher) -> Outcome:
    try:
        data, origin = fetcher.fetch(source)
    except FetchError as err:
        return Outcome(source.name, f"missing and not fetched: {err}{_readers(source)}", True)
    got = sha256(data)
    if got != source.sha256:
        return Outcome(
            source.name, f"refused (not written): from {origin}, sha256 expected {source.sha256}, got {got}", True
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    partial.replace(path)
    return Outcome(source.name, f"fetched from {origin}, sha256 matches", False)


def run(
    directory: Path,
    *,
    fetch: bool,
    fetcher: Fetcher | None = None,
    sources: Sequence[Fetched | Unpublished] = SOURCES,
    without_seeds: bool = False,
) -> list[Outcome]:
    """The outcome of every reference file in ``directory``: checked, and fetched where missing when ``fetch``. With
    ``without_seeds`` a missing seed's manifest is waived (a fork's checkout); one that is there is still checked."""
    outcomes = []
    for source in sources:
        path = directory / source.name
        if path.is_file():
            outcomes.append(_present(source, path.read_bytes()))
        elif fetch and fetcher is not None and isinstance(source, Fetched):
            outcomes.append(_fetch(source, path, fetcher))
        elif without_seeds and isinstance(source, Unpublished):
            text = (
                f"missing, gone without ({WITHOUT_SEEDS_ENV}=1): the tests that read it are skipped{_readers(source)}"
            )
            outcomes.append(Outcome(source.name, text, False, waived=True))
        else:
            outcomes.append(Outcome(source.name, f"missing: {_route(source)}{_readers(source)}", True))
    return outcomes


NEXT_STEPS = (
    "what to do: on a machine that cannot reach GitHub, copy crds/ and upstream/ of a reference folder from one that "
    "can and point TPU_SERVING_REFERENCE (or make's REFERENCE_DIR) at the copy; without the project's seed manifests, "
    f"pass {WITHOUT_SEEDS_ENV}=1 (README.md, 'Fresh machine: two commands'; docs/development.md, 'Reference schemas')"
)


def report(directory: Path, outcomes: Sequence[Outcome]) -> tuple[str, str]:
    """(what went well, the problems), each a text ready to print; the problems text is empty when there are none."""
    good = [f"  {o.name}: {o.text}" for o in outcomes if not o.problem]
    bad = [f"  - {o.name}: {o.text}" for o in outcomes if o.problem]
    waived = sum(o.waived for o in outcomes)
    matching = len(outcomes) - len(bad) - waived
    summary = f"reference folder {directory}: {matching} of {len(outcomes)} files present and matching"
    if waived:
        summary += f", {waived} seed manifest(s) gone without ({WITHOUT_SEEDS_ENV}=1)"
    problems = f"error: reference folder {directory}: {len(bad)} problem(s)\n" + "\n".join(bad) if bad else ""
    if bad:  # new-user review of issue 39, m3: the way on was only in README.md and the tests' failures
        problems += "\n" + NEXT_STEPS
    return "\n".join([summary, *good]), problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tpu_serving_tools.reference.fetch",
        description="Fetch the reference files the tests read where missing, and check every one by sha256.",
    )
    parser.add_argument("--check", action="store_true", help="only check the folder: fetch nothing")
    parser.add_argument(
        "--dir", type=Path, help="the reference folder (default $TPU_SERVING_REFERENCE, else ../shared/reference)"
    )
    args = parser.parse_args(argv)
    directory: Path = args.dir or reference_dir()
    new = not directory.exists()
    with tempfile.TemporaryDirectory(prefix="tpu-serving-reference-") as work:
        fetcher = None if args.check else Fetcher(Path(work), os.environ.get("GOPROXY"))
        without_seeds = os.environ.get(WITHOUT_SEEDS_ENV) == "1"
        outcomes = run(directory, fetch=not args.check, fetcher=fetcher, sources=SOURCES, without_seeds=without_seeds)
    good, problems = report(directory, outcomes)
    if new and directory.exists():  # new-user review round 39, m13: it may be outside the checkout
        print(
            f"created {directory.resolve()} (the reference folder: beside the checkout unless --dir or "
            "$TPU_SERVING_REFERENCE names another)"
        )
    print(good)
    if problems:
        print(problems, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
