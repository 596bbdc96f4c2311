"""The documentation site: every page of ``mkdocs.yml``'s nav exists and every page of docs/ is in it, the README
links to each, the README's parts the site includes are there, the examples the pages show are the ones the tests
run, and (slow) the site builds strictly and the Library API page's program previews and passes the checks."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, SHIPPED, STACKS, plan_of
from tests.fixtures import library_page
from tpu_serving_tools.runtime.k8s_prereqs import PRIORITY_REFUSED

ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"

DOCS = ROOT / "docs"
MKDOCS = ROOT / ".docs-venv" / "bin" / "mkdocs"
"""The site's toolchain, which make test-slow installs (make docs-venv)."""


def nav_pages(nav: Any) -> Iterator[str]:
    """Every page path of an MkDocs ``nav`` (nested sections included)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)


def config() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "mkdocs.yml").read_text()))


def test_docs_nav_pages_exist_and_every_page_is_in_the_nav():
    listed = list(nav_pages(config()["nav"]))
    assert len(listed) == len(set(listed)), "a page is listed twice in mkdocs.yml"
    missing = [p for p in listed if not (DOCS / p).is_file()]
    assert not missing, f"mkdocs.yml lists pages that do not exist: {missing}"
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert on_disk == set(listed), f"pages of docs/ missing from mkdocs.yml's nav: {sorted(on_disk - set(listed))}"


def test_docs_nav_test_fails_on_a_page_outside_the_nav():
    pages = {"index.md", "deploy.md"}
    nav = [{"Home": "index.md"}, {"Guides": [{"Deploy": "deploy.md"}]}]
    assert set(nav_pages(nav)) == pages
    assert set(nav_pages(nav[:1])) != pages


def test_docs_build_is_strict_about_links():
    cfg = config()
    assert cfg["strict"] is True and cfg["docs_dir"] == "docs" and cfg["site_dir"] == "build/site"
    assert cfg["validation"]["links"] == {
        "not_found": "warn",
        "anchors": "warn",
        "absolute_links": "warn",
        "unrecognized_links": "warn",
    }
    assert cfg["validation"]["nav"]["omitted_files"] == "warn"
    assert "mkdocs build --strict" in (ROOT / "Makefile").read_text()


def test_readme_contents_links_every_section():
    text = (ROOT / "README.md").read_text()
    contents = next(line for line in text.split("\n\n") if line.startswith("Contents:"))
    anchors = set(re.findall(r"\]\(#([a-z0-9-]+)\)", contents))
    headings = re.findall(r"^## (.+)$", text, re.M)

    def anchor(title: str) -> str:  # GitHub's: lower case, punctuation dropped, spaces to '-'
        return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")

    assert {anchor(h) for h in headings} == anchors


def test_readme_quotes_no_test_count_or_duration():
    """Counts and timings of the suite drift with every test (the README quoted 1,672 tests and a `make test` of
    43 s long after both had changed); pytest prints its own at the end of each run, and the page says so."""
    text = (ROOT / "README.md").read_text()
    assert not re.findall(r"\b\d[\d,]* tests\b", text)
    assert not re.findall(r"\btook\b[^.;]*?\d+(?:\.\d+)?\s*(?:s|min)\b", text)


def test_readme_links_every_docs_page():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Documentation\n", 1)[1]
    linked = set(re.findall(r"\]\(docs/([^)#]+)\)", section))
    assert linked == set(nav_pages(config()["nav"]))
    assert all((ROOT / "docs" / p).is_file() for p in re.findall(r"\]\(docs/([^)#]+)[^)]*\)", text))


SNIPPET = re.compile(r'^--8<-- "(?P<file>[^":]+)(?::(?P<section>[\w-]+))?"$', re.M)


def test_docs_included_readme_sections_exist():
    included = [(p, m) for p in DOCS.rglob("*.md") for m in SNIPPET.finditer(p.read_text())]
    assert {m.group("section") for _, m in included if m.group("file") == "README.md"} == {
        "intro",
        "two-commands",
        "stacks",
        "which-backend",
    }
    for page, m in included:
        source = (ROOT / m.group("file")).read_text()
        if m.group("section"):
            name = m.group("section")
            start, end = f"--8<-- [start:{name}]", f"--8<-- [end:{name}]"
            assert source.count(start) == 1 and source.count(end) == 1, (page, name)
            part = source.split(start, 1)[1].split(end, 1)[0]
            # an included part is read on the site, where the README's relative links would not resolve
            assert "](" not in part.replace("](https://", ""), (page, name)


def test_docs_new_stack_example_names_a_cluster_and_namespace_of_its_own():
    """The page's example (which tests/test_new_stack.py runs, slow, with make check over every stack) shares no
    shipped stack's project and cluster.name, nor its project and namespace (new-user review of issue 39, Major)."""
    from tests.conftest import STACKS
    from tests.test_new_stack import doc_stack_file

    def owner(config: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
        project = config["gcp:project"]
        cluster = config.get("cluster", {}).get("name", "")
        return (project, cluster), (project, config.get("workloadIdentity", {}).get("namespace", ""))

    example = owner(yaml.safe_load(doc_stack_file())["config"])
    assert example[0][1] and example[1][1], example
    for stack in STACKS:
        shipped = owner(yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"])
        assert example[0] != shipped[0] and example[1] != shipped[1], (stack, shipped)


def test_docs_walkthrough_says_what_to_do_about_ckv_gcp_65():
    """Checkov's CKV_GCP_65 wants authenticator_groups_config.security_group: every shipped stack sets
    cluster.securityGroup, so the shipped baseline accepts no CKV_GCP_65, and a user's stack without it meets the
    finding; the walkthrough names it with both ways out (the group, or a baseline entry of one's own)."""
    from tests.conftest import STACKS

    for stack in STACKS:
        config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert config["cluster"].get("securityGroup", "").startswith("gke-security-groups@"), stack
    baseline = yaml.safe_load((ROOT / "tools" / "scan" / "baseline.yaml").read_text())["accepted"]
    assert "CKV_GCP_65" not in {e["check"] for e in baseline}
    page = " ".join((DOCS / "add-your-own-model.md").read_text().split())
    assert "A stack without `cluster.securityGroup` fails `CKV_GCP_65` too" in page
    assert "- {check: CKV_GCP_65, resource: google_container_cluster.llama8b-1host-cluster, reason:" in page


@pytest.mark.slow
def test_docs_site_builds_strictly(tmp_path: Path):
    site = tmp_path / "site"
    done = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "reference" / "components" / "index.html").is_file()
    home = (site / "index.html").read_text()
    assert "Platform teams use it two ways" in home and "--8&lt;--" not in home


@pytest.mark.slow
def test_docs_library_example_previews_and_passes_prerequisites(tmp_path: Path):
    example = library_page.one_slice_program()
    serving = library_page.block_with("VllmServing(")
    (tmp_path / "Pulumi.yaml").write_text("name: my-serving\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(example)
    cli = [sys.executable, "-m", "tpu_serving_tools.cli"]
    preview = subprocess.run([*cli, "preview", "dev", "--root", str(tmp_path)], capture_output=True, text=True)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True)
    line = next(x for x in check.stdout.splitlines() if x.startswith("dev: "))
    found = dict(re.findall(r"(prerequisites met|unchanged on a second up) (\d+/\d+)", line))
    assert set(found) == {"prerequisites met", "unchanged on a second up"}, line
    assert all(a == b for a, b in (v.split("/") for v in found.values())), line
    # with the page's serving component after it, every line of the check passes but the serving's PriorityClass,
    # which the Tenancy after it declares (library review 14, M1: the page's serving ran at priority 0)
    (tmp_path / "__main__.py").write_text(example + serving)
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 1, check.stdout + check.stderr
    failed = [x for x in check.stdout.splitlines() if x.startswith("  [")]
    assert failed == [
        f"  [prerequisites] priority class tpu-serving-online of LeaderWorkerSet serving/vllm: {PRIORITY_REFUSED}"
    ], check.stdout
    # 14: the Cloud Storage FUSE volumes on a cluster with the add-on (GKE review 65, m2), and the class
    assert "engine containers conform" in check.stdout and "prerequisites met 13/14" in check.stdout, check.stdout
    assert "host-maintenance gate: no LeaderWorkerSet with standing groups in two pools" in check.stdout, check.stdout
    # the runbook reads a program's cluster, namespace and pools off its resources (user review 11, M3)
    book = subprocess.run([*cli, "runbook", "--stack", "dev", "--root", str(tmp_path)], capture_output=True, text=True)
    assert book.returncode == 0, book.stdout + book.stderr
    assert "--node-pool serving-v6e8" in book.stdout and "namespace serving, leaderworkerset vllm" in book.stdout
    # the tenancy built from the serving's neighbours (library review 2, M7): quota and policies the check admits
    tenant = library_page.block_with("server.neighbours()")
    (tmp_path / "__main__.py").write_text(example + serving + tenant)
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    line = next(x for x in check.stdout.splitlines() if x.startswith("dev: "))
    assert re.search(r"quota admits ([1-9]\d*)/\1,", line) and re.search(r"flows allowed ([1-9]\d*)/\1,", line), line
    # one group on one on-demand slice: what a stack file's production: true refuses warns, and fails with --production
    # (library review 9, M3)
    assert "  warning [production] standing groups LeaderWorkerSet serving/vllm: 1 standing group(s)" in check.stdout
    strict = subprocess.run([*cli, "check", "--production", "--root", str(tmp_path)], capture_output=True, text=True)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "  [production] standing groups LeaderWorkerSet serving/vllm: 1 standing group(s)" in strict.stdout


@pytest.mark.slow
def test_docs_library_gate_and_mirror_example_previews_and_passes_the_check(tmp_path: Path):
    """The page's "Host maintenance and the image mirror" program (the building blocks, then two v6e-8 groups in two
    zones behind the gate, their image through the mirror) passes ``tpu-serving check`` with its gate counted and no
    warning; without the gate, the check warns and still passes, and the preview says so on a ``Maintenance:`` line."""
    example = library_page.platform()  # the gate's program serves on two v6e-8 slices of its own, not the one-slice
    gated = library_page.block_with("HostMaintenanceGate(")
    (tmp_path / "Pulumi.yaml").write_text("name: my-serving\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(example + gated)
    cli = [sys.executable, "-m", "tpu_serving_tools.cli"]
    preview = subprocess.run([*cli, "preview", "dev", "--root", str(tmp_path)], capture_output=True, text=True)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "Maintenance: LeaderWorkerSet serving/vllm: 2 standing groups in serving-v6e8a" in preview.stdout
    assert "images through this stack's remote repositories serving-dockerhub (Docker Hub): " in preview.stdout
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "standing groups apart gated 1/1" in check.stdout and "warning [maintenance]" not in check.stdout
    ungated = gated.split("gate = HostMaintenanceGate(", 1)[0]
    (tmp_path / "__main__.py").write_text(example + ungated)
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "standing groups apart gated 0/1" in check.stdout, check.stdout
    assert "  warning [maintenance] gate LeaderWorkerSet serving/vllm: 2 standing groups" in check.stdout
    # a slice of another shape left in (the page's first example was a v6e-16), nothing serves on it: the check
    # names it (user review 11, M2)
    one_slice = library_page.one_slice_program()
    other = one_slice.replace('catalog.slice_shape("ct6e-standard-8t", "2x4")', 'catalog.resolve_slice_name("v6e-16")')
    assert other != one_slice
    (tmp_path / "__main__.py").write_text(other + gated)
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "  [coverage] coverage tpu pool serving-v6e8: no pod that requests google.com/tpu" in check.stdout


def alert_table_patterns(text: str) -> list[re.Pattern[str]]:
    """The first cells of docs/operate.md's alert table (the one table under "Alerts: what each means"), each as a
    pattern of the AlertPolicy displayName it documents: the name before its parenthesis, a `` `<placeholder>` `` for
    any one word, after the stack's optional "<prefix>: "."""
    section = text.split("## Alerts: what each means", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| alert |"))
    rows = [line for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start + 2 :])]
    patterns = []
    for row in rows:
        name = row.split("|")[1].strip().split(" (", 1)[0]
        body = "".join(r"\S+" if part.startswith("`<") else re.escape(part) for part in re.split(r"(`<[^>]+>`)", name))
        patterns.append(re.compile(rf"(?:.+: )?{body}"))
    return patterns


def undocumented_alerts(patterns: list[re.Pattern[str]], stacks: Iterable[str]) -> dict[str, list[str]]:
    """The AlertPolicy displayNames of ``stacks``' plans that no row of the table names, by stack."""
    out: dict[str, list[str]] = {}
    for stack in stacks:
        names = [r.inputs["displayName"] for r in plan_of(stack).resources if r.type == ALERT_POLICY]
        assert names, f"{stack}: the plan has no AlertPolicy: the table check would check nothing"
        missing = [n for n in names if not any(p.fullmatch(n) for p in patterns)]
        if missing:
            out[stack] = missing
    return out


def test_docs_operate_alert_table_has_a_row_for_every_alert_policy():
    patterns = alert_table_patterns((ROOT / "docs" / "operate.md").read_text())
    assert len(patterns) >= 20, f"docs/operate.md's alert table parsed to {len(patterns)} rows"
    assert undocumented_alerts(patterns, STACKS) == {}, (
        "docs/operate.md, 'Alerts: what each means and what to do': add a row for each (first cell: its name)"
    )


def test_docs_operate_alert_table_check_fails_on_a_missing_row():
    patterns = alert_table_patterns((ROOT / "docs" / "operate.md").read_text())
    kept = [p for p in patterns if not p.pattern.endswith(re.escape("Serving probe missing"))]
    assert len(kept) == len(patterns) - 1
    assert undocumented_alerts(kept, ["vllm-llama33-70b-v6e8"]) == {
        "vllm-llama33-70b-v6e8": ["vllm70bv6e: Serving probe missing"]
    }


def test_docs_library_mocks_section_shows_the_example_tests_code():
    """The code blocks of docs/library-api.md's section on mocks are tests/test_library_mocks.py's text, so the page
    shows what runs. Kept here, not in that file: a user copies it alone (new-user review 11, m12: the copy failed on
    this check, which read ../docs)."""
    page = (DOCS / "library-api.md").read_text()
    section = page.split("## Unit tests under Pulumi's mocks", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    this = (ROOT / "tests" / "test_library_mocks.py").read_text()
    assert len(blocks) == 2
    assert all(block in this for block in blocks)
    assert "docs" not in re.sub(r'""".*?"""', "", this, flags=re.S), "the example to copy reads no repository file"


ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"


def _network_makers() -> dict[str, set[str]]:
    """Per shipped stack, the shipped stacks that make a network resource it uses and does not make: the Cloud NAT it
    names (``cluster.cloudNat: existing``), the proxy-only subnet of its project, region and network
    (``gateway.createProxyOnlySubnet: false``), read off the plans."""
    plans = {s: plan_of(s).as_json() for s in SHIPPED}
    nats: dict[tuple[Any, ...], str] = {}
    subnets: dict[tuple[Any, ...], str] = {}
    for stack, plan in plans.items():
        for r in plan["resources"]:
            i = r["inputs"]
            if r["type"] == ROUTER_NAT:
                nats[(i.get("project"), i.get("region"), i.get("router"), i.get("name"))] = stack
            elif r["type"] == SUBNETWORK and i.get("purpose") == "REGIONAL_MANAGED_PROXY":
                subnets[(i.get("project"), i.get("region"), i.get("network"))] = stack
    uses: dict[str, set[str]] = {}
    for stack, plan in plans.items():
        cfg = plan["config"]
        where = (cfg.get("gcp:project"), cfg.get("gcp:region"))
        cluster = json.loads(cfg.get("tpu-serving:cluster") or "{}")
        gateway = json.loads(cfg.get("tpu-serving:gateway") or "{}")
        found = set()
        if cluster.get("cloudNat") == "existing":
            found.add(nats.get((*where, cluster.get("existingNatRouter"), cluster.get("existingNat"))))
        if gateway.get("createProxyOnlySubnet") is False:
            found.add(subnets.get((*where, cluster.get("network", "default"))))
        uses[stack] = {s for s in found if s is not None}
    return uses


def test_docs_tear_down_order_names_every_stack_that_uses_another_stacks_network():
    """docs/tear-down.md's "In what order" table, which the README's Stacks part points to: each stack that uses a
    Cloud NAT or proxy-only subnet another stack makes is in the row of that stack (new-user review m5; the row of
    us-east5 lacked vllm-llama33-70b-disagg-v6e8x2, that of us-west4 vllm-llama33-70b-existing)."""
    text = (DOCS / "tear-down.md").read_text()
    rows = [line.split(" | ") for line in text.split("## In what order", 1)[1].splitlines() if line.startswith("| us-")]
    uses = _network_makers()
    assert uses["vllm-llama31-405b-v6e16"] == {"llama31-405b-v6e16"}  # the NAT and the proxy-only subnet
    assert sum(bool(m) for m in uses.values()) >= 7, uses
    for user, makers in uses.items():
        for maker in makers:
            assert any(f"`{maker}`" in made and f"`{user}`" in used for _, made, used in rows), (user, maker)


def test_readme_and_stack_file_say_vllm405b_needs_the_jetstream_stacks_network():
    """New-user review m5: nothing at the top of the vLLM 405B stack, nor its README row, said that it uses the Cloud NAT
    and proxy-only subnet stack llama31-405b-v6e16 makes, so must come after it; both now say so, by name."""
    stack = "vllm-llama31-405b-v6e16"
    (maker,) = _network_makers()[stack]
    lines = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text().split("\nconfig:\n", 1)[0]
    header = " ".join(line.lstrip("# ") for line in lines.splitlines())
    assert f"Needs stack {maker} deployed first" in header and "destroy it last" in header, header
    assert "llama405b-nat-router/llama405b-nat" in header and "proxy-only subnet" in header
    readme = (ROOT / "README.md").read_text()
    (row,) = [line for line in readme.splitlines() if line.startswith(f"| `{stack}` |")]
    assert f"**needs `{maker}` deployed first**" in row and "Cloud NAT" in row and "proxy-only subnet" in row
