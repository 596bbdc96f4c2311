"""The e2e toolchain (tools/e2e/toolchain.py): its go.mod files agree with the version set, and its cache is reused.
Nothing here runs Go: the build is a recorded fake."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving.catalog.versions import GO_MODULE_RELEASES, PINS
from tpu_serving_tools.e2e import toolchain
from tpu_serving_tools.e2e.toolchain import TOOLS, TOOLS_DIR, Toolchain

MODULES = ROOT / TOOLS_DIR
BUILT = [t for t in TOOLS if not t.unavailable]


def _go_mod(path: Path) -> dict[str, dict[str, str]]:
    """A go.mod's requirements, replacements (module -> target version) and tools, by directive."""
    found: dict[str, dict[str, str]] = {"require": {}, "replace": {}, "tool": {}}
    block = ""
    for raw in path.read_text().splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if line == ")":
            block = ""
            continue
        words = line.split()
        if words[0] in found and words[-1] == "(":
            block = words[0]
            continue
        directive, words = (block, words) if block else (words[0], words[1:])
        if directive == "require":
            found["require"][words[0]] = words[1]
        elif directive == "replace":
            found["replace"][words[0]] = words[-1]
        elif directive == "tool":
            found["tool"][words[0]] = ""
    return found


def _sdk(name: str) -> str:
    (line,) = [x for x in (ROOT / "constraints.txt").read_text().splitlines() if x.startswith(f"{name}==")]
    return line.split("==")[1]


def test_e2e_toolchain_every_go_pin_is_a_tool_and_every_tool_a_pin():
    assert [t.pin for t in TOOLS] == [p.key for p in toolchain.pins()]
    assert {p.name for p in MODULES.iterdir()} == {t.name for t in BUILT}, "a module directory per buildable tool"


@pytest.mark.parametrize("tool", BUILT, ids=lambda t: t.name)
def test_e2e_toolchain_go_mod_agrees_with_the_version_set(tool):
    pin = PINS[tool.pin]
    mod = _go_mod(MODULES / tool.name / "go.mod")
    assert mod["require"][pin.module] == pin.version, f"{tool.name}/go.mod requires another {pin.module}"
    packages = {f"{pin.module}/{b.package}" if tool.overlay else b.package for b in tool.binaries}
    assert set(mod["tool"]) == packages
    sums = (MODULES / tool.name / "go.sum").read_text()
    for line in (f"{pin.module} {pin.version} h1:", f"{pin.module} {pin.version}/go.mod h1:"):
        assert line in sums, f"{tool.name}/go.sum has no {line}"


def test_e2e_toolchain_replaces_agree_with_the_pins():
    k8s = PINS["go-kubernetes"].version
    staging = "v0." + k8s.split(".", 1)[1]
    replace = _go_mod(MODULES / "kubernetes" / "go.mod")["replace"]
    assert len(replace) >= 30 and all(m.startswith("k8s.io/") for m in replace)
    assert set(replace.values()) == {staging}, f"k8s.io/kubernetes {k8s} builds with its staging modules at {staging}"
    etcd = _go_mod(MODULES / "etcd" / "go.mod")["replace"]
    assert set(etcd.values()) == {PINS["go-etcd"].version}
    pulumi = _go_mod(MODULES / "pulumi" / "go.mod")["replace"]
    assert pulumi["github.com/pulumi/pulumi/sdk/v3"] == PINS["go-pulumi"].version
    provider = _go_mod(MODULES / "pulumi-kubernetes" / "go.mod")["replace"]
    assert provider == {"github.com/pulumi/pulumi-kubernetes/sdk/v4": GO_MODULE_RELEASES["go-pulumi-kubernetes"]}


def test_e2e_toolchain_controllers_are_the_releases_the_stacks_install():
    assert PINS["go-jobset"].value == PINS["jobset"].value
    # LWS: the nearest release the module proxy serves, the difference stated where the pin is held back
    assert PINS["go-lws"].value != PINS["lws"].value and PINS["go-lws"].held
    assert PINS["lws"].value in PINS["go-lws"].agrees_with and "does not" in PINS["go-lws"].agrees_with


def test_e2e_toolchain_pulumi_agrees_with_the_python_sdks():
    cli, sdk = PINS["go-pulumi"], _sdk("pulumi")
    assert tuple(map(int, cli.version.lstrip("v").split("."))) >= tuple(map(int, sdk.split("."))), "CLI older than SDK"
    assert f"pulumi=={sdk}" in cli.agrees_with and cli.version.lstrip("v") in cli.agrees_with
    provider, k8s_sdk = PINS["go-pulumi-kubernetes"], _sdk("pulumi_kubernetes")
    release = GO_MODULE_RELEASES["go-pulumi-kubernetes"]
    assert f"pulumi_kubernetes=={k8s_sdk}" in provider.agrees_with and f"release {release}" in provider.agrees_with
    assert provider.newest == f"v{k8s_sdk}" and f"tag {release}" in provider.source
    assert provider.version.endswith("-" + provider.source.split("commit ", 1)[1][:12])


def test_e2e_toolchain_pins_are_never_a_plans():
    from tpu_serving_tools.preview.versions import used_pins

    text = " ".join(p.value for p in toolchain.pins())
    assert not [p.key for p in used_pins(text) if p.module]


class _FakeGo:
    """Records the commands; ``go build -o X`` writes X; ``go mod download`` answers from a fake module cache."""

    def __init__(self, modules: Path) -> None:
        self.modules = modules
        self.commands: list[list[str]] = []

    def __call__(self, command, cwd, env):
        self.commands.append(list(command))
        assert env["CGO_ENABLED"] == "0" and env["GOTOOLCHAIN"] == "local" if command[0] == "go" else True
        if command[1:3] == ["env", "GOVERSION"]:
            return "go1.26.8\n"
        if command[1:3] == ["mod", "download"]:
            info = self.modules / "x.info"
            info.write_text(json.dumps({"Version": "v3.6.16", "Origin": {"Hash": "abc123"}}))
            return json.dumps({"Dir": str(self.modules), "Info": str(info)})
        if command[1] == "build":
            out = Path(command[command.index("-o") + 1])
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("binary")
        return ""

    def builds(self) -> list[list[str]]:
        return [c for c in self.commands if c[:2] == ["go", "build"]]


@pytest.fixture
def chain(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(MODULES / "etcd", root / TOOLS_DIR / "etcd")
    (tmp_path / "modcache").mkdir()
    return Toolchain(root, tmp_path / "cache", runner=_FakeGo(tmp_path / "modcache"), log=lambda _: None)


def test_e2e_toolchain_builds_once_and_reuses_the_cache(chain):
    first = chain.build(only=["etcd"])
    (build,) = chain.runner.builds()
    assert "-X go.etcd.io/etcd/api/v3/version.GitSHA=abc123" in build[build.index("-ldflags") + 1]
    path = Path(first["binaries"]["etcd"])
    assert path == chain.cache / f"etcd-{PINS['go-etcd'].version}-go1.26.8" / "bin" / "etcd" and path.is_file()
    assert first["tools"]["etcd"]["built_seconds"] is not None
    assert "lws" not in first["unavailable"] and "pathways-job" in first["unavailable"]
    chain.built.clear()
    second = chain.build(only=["etcd"])
    assert len(chain.runner.builds()) == 1, "the second run builds nothing"
    assert second["binaries"] == first["binaries"] and second["tools"]["etcd"]["built_seconds"] is None
    go_sum = chain.root / TOOLS_DIR / "etcd" / "go.sum"
    go_sum.write_text(go_sum.read_text() + "\n")
    chain.build(only=["etcd"])
    assert len(chain.runner.builds()) == 2, "a changed go.sum is a new recipe"


def test_e2e_toolchain_leaves_out_a_commit_the_proxy_does_not_name(chain):
    (etcd,) = [t for t in TOOLS if t.name == "etcd"]
    assert "GitSHA" not in chain.ldflags(etcd, commit="")
    (k8s,) = [t for t in TOOLS if t.name == "kubernetes"]
    flags = chain.ldflags(k8s, commit="")
    version = PINS["go-kubernetes"].version
    assert f"-X k8s.io/component-base/version.gitVersion={version}" in flags
    assert f"gitMinor={version.split('.')[1]}" in flags


def test_e2e_toolchain_outside_a_checkout_says_so(tmp_path, capsys):
    assert toolchain.main(["--root", str(tmp_path), "--cache", str(tmp_path / "c")]) == 1
    assert re.search(r"no e2e/tools under .*--root", capsys.readouterr().out)
