"""make reference / make reference-check (tools/reference/fetch.py) and the record of the reference files
(tools/reference/sources.py): fetched from a Go module proxy or a URL, refused on a sha256 that differs, the
unfetchable seeds named with the tests that read them, and the folder override."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, WITHOUT_SEEDS_ENV, missing_seeds
from tpu_serving_tools.reference import fetch as tool
from tpu_serving_tools.reference.sources import (
    PROXY_REFUSED,
    REFERENCE_ENV,
    SEEDS,
    SOURCES,
    Fetched,
    GoModule,
    Unpublished,
    reference_dir,
)

CONTENT = b"kind: CustomResourceDefinition\n"
MODULE = GoModule("github.com/Owner/Repo", "v1.0.0", "config/crd/x.yaml")


def _source(sha: str = hashlib.sha256(CONTENT).hexdigest(), module: GoModule | None = MODULE) -> Fetched:
    return Fetched("crds/x-crd.yaml", sha, "Owner/Repo", "v1.0.0", "config/crd/x.yaml", module, ("tests/test_x.py",))


def _proxy(tmp_path: Path, member: str = f"{MODULE.module}@{MODULE.version}/{MODULE.file}") -> str:
    """A Go module proxy in a folder (file:// URL, as GOPROXY allows) serving MODULE's zip, its path case-encoded."""
    at = tmp_path / "proxy" / "github.com" / "!owner" / "!repo" / "@v"
    at.mkdir(parents=True)
    with zipfile.ZipFile(at / "v1.0.0.zip", "w") as archive:
        archive.writestr(member, CONTENT)
    return (tmp_path / "proxy").as_uri()


def _run(tmp_path: Path, source: Fetched, goproxy: str) -> list[tool.Outcome]:
    work = tmp_path / "work"
    work.mkdir()
    return tool.run(tmp_path / "ref", fetch=True, fetcher=tool.Fetcher(work, goproxy), sources=[source])


def test_reference_escape_case_encodes_module_paths():
    assert tool.escape("github.com/GoogleCloudPlatform/prometheus-engine") == (
        "github.com/!google!cloud!platform/prometheus-engine"
    )
    assert tool.escape("sigs.k8s.io/lws") == "sigs.k8s.io/lws"


def test_reference_proxies_are_read_from_goproxy():
    assert tool.proxies(None) == tool.proxies("") == ["https://proxy.golang.org"]
    assert tool.proxies("https://a.example/,https://b.example|direct") == ["https://a.example", "https://b.example"]
    assert tool.proxies("off") == tool.proxies("direct") == []


def test_reference_fetches_a_go_module_file_through_the_proxy(tmp_path):
    (outcome,) = _run(tmp_path, _source(), _proxy(tmp_path))
    assert not outcome.problem, outcome.text
    assert "Go module proxy, github.com/Owner/Repo@v1.0.0/config/crd/x.yaml" in outcome.text
    assert (tmp_path / "ref" / "crds" / "x-crd.yaml").read_bytes() == CONTENT


def test_reference_refuses_fetched_bytes_whose_sha256_differs(tmp_path):
    (outcome,) = _run(tmp_path, _source(sha="0" * 64), _proxy(tmp_path))
    assert outcome.problem
    assert outcome.name == "crds/x-crd.yaml"
    assert f"expected {'0' * 64}, got {hashlib.sha256(CONTENT).hexdigest()}" in outcome.text
    assert not (tmp_path / "ref" / "crds" / "x-crd.yaml").exists()


def test_reference_falls_back_to_the_url_when_the_proxy_does_not_serve_the_module(tmp_path, monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(tool.Fetcher, "url_file", lambda self, url: asked.append(url) or CONTENT)
    empty = tmp_path / "empty-proxy"
    empty.mkdir()
    (outcome,) = _run(tmp_path, _source(), empty.as_uri())
    assert not outcome.problem, outcome.text
    assert asked == ["https://raw.githubusercontent.com/Owner/Repo/v1.0.0/config/crd/x.yaml"]


def test_reference_names_every_route_that_failed(tmp_path, monkeypatch):
    def unreachable(self, url):
        raise tool.FetchError(f"{url}: unreachable")

    monkeypatch.setattr(tool.Fetcher, "url_file", unreachable)
    (outcome,) = _run(tmp_path, _source(), _proxy(tmp_path, member="github.com/Owner/Repo@v1.0.0/other.yaml"))
    assert outcome.problem
    assert "zip holds no config/crd/x.yaml" in outcome.text and "x.yaml: unreachable" in outcome.text
    assert "read by tests/test_x.py" in outcome.text


def test_reference_main_says_where_it_created_the_folder(tmp_path, capsys, monkeypatch):
    """New-user review round 39, m13: the folder is beside the checkout, outside it; its creation is said."""
    monkeypatch.setattr(tool, "SOURCES", (_source(),))
    monkeypatch.setattr(tool.Fetcher, "url_file", lambda self, url: CONTENT)
    monkeypatch.setenv("GOPROXY", (tmp_path / "no-proxy").as_uri())
    (tmp_path / "no-proxy").mkdir()
    folder = tmp_path / "shared" / "reference"
    assert tool.main(["--dir", str(folder)]) == 0
    assert f"created {folder.resolve()}" in capsys.readouterr().out
    assert tool.main(["--dir", str(folder)]) == 0
    assert "created" not in capsys.readouterr().out  # only the run that made it says so


def test_reference_check_names_every_missing_file_and_fetches_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(WITHOUT_SEEDS_ENV, raising=False)  # a fork's make test sets it (new-user review 12, M2)
    assert tool.main(["--check", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{len(SOURCES)} problem(s)" in err
    assert all(f"- {s.name}: missing" in err for s in SOURCES)
    assert err.rstrip().endswith(tool.NEXT_STEPS) and "TPU_SERVING_REFERENCE" in tool.NEXT_STEPS
    for seed in SEEDS:
        (line,) = [line for line in err.splitlines() if f"- {seed.name}:" in line]
        assert "not published as a file" in line and f"read by {', '.join(seed.read_by)}" in line
    assert not list(tmp_path.iterdir())


def test_reference_check_names_for_a_missing_seed_the_ci_variable_the_workflow_reads(tmp_path, capsys, monkeypatch):
    """New-user review m4 (not a bug: the variable is CI's, read by ci.yml as vars.TPU_SERVING_REFERENCE_REPOSITORY):
    the message said "CI's TPU_SERVING_REFERENCE_REPOSITORY", which read as an environment variable nothing defines;
    it names a GitHub Actions variable the workflow reads, and the page that says where the repository comes from."""
    monkeypatch.delenv(WITHOUT_SEEDS_ENV, raising=False)
    assert tool.main(["--check", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    for seed in SEEDS:
        (line,) = [line for line in err.splitlines() if f"- {seed.name}:" in line]
        (named,) = re.findall(r"Actions variable (\w+) names: docs/development.md, Reference schemas", line)
        assert f"vars.{named}" in workflow, named


def test_reference_check_waives_only_the_seeds_in_a_checkout_that_goes_without_them(
    tmp_path, capsys, monkeypatch, reference
):
    """New-user review 11, M4: a fork's make reference-check failed on the four seeds for good. With
    WITHOUT_SEEDS=1 they are waived, said as such, and every other file is still required and checked."""
    for source in SOURCES:
        if not isinstance(source, Unpublished):
            (tmp_path / source.name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(reference / source.name, tmp_path / source.name)
    monkeypatch.delenv(WITHOUT_SEEDS_ENV, raising=False)
    assert tool.main(["--check", "--dir", str(tmp_path)]) == 1
    assert "- seed-manifests/" in capsys.readouterr().err
    monkeypatch.setenv(WITHOUT_SEEDS_ENV, "1")
    assert tool.main(["--check", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    matching = len(SOURCES) - len(SEEDS)
    assert f"{matching} of {len(SOURCES)} files present and matching, {len(SEEDS)} seed manifest(s) gone without" in out
    assert all(f"{seed.name}: missing, gone without ({WITHOUT_SEEDS_ENV}=1)" in out for seed in SEEDS)
    # what is not a seed stays required
    (tmp_path / next(s for s in SOURCES if isinstance(s, Fetched)).name).unlink()
    assert tool.main(["--check", "--dir", str(tmp_path)]) == 1


def test_reference_check_refuses_a_present_file_whose_sha256_differs(tmp_path):
    source = next(s for s in SOURCES if isinstance(s, Fetched))
    (tmp_path / source.name).parent.mkdir(parents=True)
    (tmp_path / source.name).write_bytes(b"edited")
    outcome = tool.run(tmp_path, fetch=False)[0]
    assert outcome.problem
    assert f"expected {source.sha256}, got {hashlib.sha256(b'edited').hexdigest()}" in outcome.text


def test_reference_sources_dir_is_the_override_else_beside_the_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    checkout = tmp_path / "fork"
    checkout.mkdir()
    # new-user review 10, m10: no ../shared, so not beside it (every sibling checkout's): inside the checkout
    assert reference_dir(checkout) == checkout / ".reference"
    (tmp_path / "shared").mkdir()
    assert reference_dir(checkout) == tmp_path / "shared" / "reference"
    monkeypatch.setenv(REFERENCE_ENV, str(tmp_path / "elsewhere"))
    assert reference_dir(checkout) == tmp_path / "elsewhere"


def test_reference_sources_name_every_file_the_code_reads():
    from tests.components.backends import test_jetstream, test_saxml, test_vllm
    from tpu_serving_tools.e2e import crds, run
    from tpu_serving_tools.reference import schema

    names = {s.name for s in SOURCES}
    assert len(names) == len(SOURCES)
    read = [f for v in schema.CRD_FILES.values() for f in ((v,) if isinstance(v, str) else v)]
    read += [s.schema for s in crds.GKE_SCHEMAS] + list(crds.CONTROLLER_SHARED_FILES)
    read += [f for m in crds.CONTROLLER_MODULES for f in m.fallback] + [run.SHARED_PATHWAYS_JOB.name]
    seeds = [f"seed-manifests/{f}" for f, _, _ in test_jetstream.PATHWAYS_STACKS.values()] + [
        f"seed-manifests/{test_saxml.SEED}"
    ]
    assert {f"crds/{f}" for f in read} | set(seeds) | {f"upstream/{test_vllm.UPSTREAM_EXAMPLE.name}"} <= names


def test_reference_sources_modules_are_the_upstream_release():
    for source in SOURCES:
        if isinstance(source, Fetched) and source.module is not None:
            assert (source.module.version, source.module.file) == (source.ref, source.path), source.name
        if isinstance(source, Unpublished):
            assert source.read_by, source.name


def test_reference_sources_are_the_docs_tables():
    """docs/development.md, Reference schemas: every file, and which the Go module proxy serves ("module")."""
    import re

    section = (ROOT / "docs" / "development.md").read_text().split("## Reference schemas", 1)[1]
    routes = {}
    for row in re.findall(r"^\| (`.*) \|$", section, re.M):
        cells = row.split(" | ")
        routes |= {name: cells[-1].startswith("module") for name in re.findall(r"`([^`]+)`", cells[0])}
    fetched = [s for s in SOURCES if isinstance(s, Fetched)]
    assert set(routes) == {s.name.split("/", 1)[1] for s in fetched}
    for s in fetched:
        served = s.module is not None and (s.module.module, s.module.version) not in PROXY_REFUSED
        assert routes[s.name.split("/", 1)[1]] == served, s.name
    assert all(Path(s.name).name in section for s in SEEDS)


def test_reference_check_passes_on_the_reference_folder(reference, seeds):
    """The recorded checksums are those of the reference folder the suite reads (CI's ../shared)."""
    assert not [f"{o.name}: {o.text}" for o in tool.run(reference, fetch=False) if o.problem]


def _proxy_reachable(proxy: str) -> bool:
    try:
        with urllib.request.urlopen(f"{proxy}/sigs.k8s.io/jobset/@v/v0.12.0.info", timeout=15) as r:
            return bool(r.read())
    except OSError:
        return False


@pytest.mark.slow
def test_reference_go_module_files_through_the_proxy_match_their_sha256(tmp_path):
    """The real route: every file recorded in a Go module, from the proxy (GOPROXY), into a temporary folder.
    About 100 MB of module zips (prometheus-engine's is 91 MB)."""
    (proxy, *_) = tool.proxies(os.environ.get("GOPROXY")) or [""]
    if not proxy or not _proxy_reachable(proxy):
        message = f"the Go module proxy {proxy or '(none in GOPROXY)'} is not reachable"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI reaches it (make e2e-tools builds from it), so this must run there")
        pytest.skip(message)
    fetcher = tool.Fetcher(tmp_path, proxy)
    fetched = 0
    for source in SOURCES:
        if not isinstance(source, Fetched) or source.module is None:
            continue
        m = source.module
        try:
            data = fetcher.module_file(m)
        except tool.FetchError as err:  # proxy.golang.org refuses these (403); another GOPROXY may serve them
            assert (m.module, m.version) in PROXY_REFUSED, f"{source.name}: {err}"
            continue
        assert hashlib.sha256(data).hexdigest() == source.sha256, source.name
        fetched += 1
    assert fetched >= 9


def test_reference_make_targets_run_the_tool():
    makefile = (ROOT / "Makefile").read_text()
    assert "reference: $(VENV)/.runtime\n\t$(PYTHON) -m tpu_serving_tools.reference.fetch\n" in makefile
    assert "reference-check: $(VENV)/.runtime\n\t$(PYTHON) -m tpu_serving_tools.reference.fetch --check\n" in makefile


@pytest.mark.slow
def test_reference_dir_override_reaches_the_tests_and_the_schemas(tmp_path):
    code = "from tests.conftest import REFERENCE; from tpu_serving_tools.reference.schema import CRD_DIR; print(REFERENCE, CRD_DIR)"
    env = {k: v for k, v in os.environ.items() if k != "TPU_SERVING_CRDS"} | {REFERENCE_ENV: str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(tmp_path), str(tmp_path / "crds")]


def test_missing_seeds_fail_unless_the_checkout_says_it_goes_without(tmp_path):
    """User review round 42, M1: a fork cannot have the seeds' manifests, and its make test could never pass;
    TPU_SERVING_WITHOUT_SEEDS=1 (make test WITHOUT_SEEDS=1) skips the tests that read them, and only then."""
    assert missing_seeds(tmp_path, {}) is None  # the folder is there
    gone = tmp_path / "seed-manifests"
    fail, why = missing_seeds(gone, {})  # type: ignore[misc]
    assert fail is False and "make test WITHOUT_SEEDS=1" in why
    skip, why = missing_seeds(gone, {WITHOUT_SEEDS_ENV: "1"})  # type: ignore[misc]
    assert skip is True and str(gone) in why
    assert missing_seeds(gone, {WITHOUT_SEEDS_ENV: "0"})[0] is False  # type: ignore[index]


def test_missing_reference_file_names_the_file_a_failed_test_needed():
    """New-user reviews 15 m6 and 16 m5: a fork that fetched some reference files failed every test that reads any
    (one session fixture required whole folders); a test now fails only on its own missing file, named."""
    from tests.conftest import REFERENCE, missing_reference_file

    gone = REFERENCE / "upstream" / "no-such-file.yaml"
    said = missing_reference_file(FileNotFoundError(2, "No such file or directory", str(gone)))
    assert said is not None and said.startswith("needs the reference file upstream/no-such-file.yaml: run `make ref")
    assert missing_reference_file(FileNotFoundError(2, "No such file or directory", "/elsewhere/x")) is None
    assert missing_reference_file(ValueError("x")) is None and missing_reference_file(None) is None
