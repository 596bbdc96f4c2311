"""Extract the endpoint picker's flags and configuration names from its source:
``python -m tpu_serving_tools.conformance.extract_epp --epp-git-dir DIR --runtime-git-dir DIR``.

The EPP is llm-d/llm-d-router at :data:`~tpu_serving_tools.conformance.epp.EPP_TAG` (gateway-api-inference-extension
v1.6.0 moved it there: that release's README, l.16-23). Read from local git directories of llm-d-router and of the
controller-runtime release its ``go.mod`` requires; the table records the tags, commits and files:

- flags: ``pkg/epp/server/options.go`` (``Options.AddFlags``: ``fs.<Type>Var[P](&..., "name", ...)``), then
  ``pkg/common/observability/logging/options.go`` (``LoggingOptions.AddFlags``: ``--v`` and controller-runtime's zap
  flags through ``ZapOptions.BindFlags``, read from ``pkg/log/zap/zap.go``). The metric flags options.go lists in
  ``deprecatedMetricFlags`` are refused when set (``Options.Validate``): ``choices["rejected flags"]``;
- the ``--config-file`` format: its apiVersion (``apix/config/v1alpha1/zz_generated.register.go``: ``GroupName``
  and ``GroupVersion``; the deprecated one it still loads, ``deprecatedSchemeGroupVersion`` of
  ``pkg/epp/config/loader/configloader.go``), its top-level keys (the json names of ``type EndpointPickerConfig``,
  ``apix/config/v1alpha1/endpointpickerconfig_types.go``; the loader decodes strictly), and the plugin types the
  runner registers (``registerInTreePlugins`` of ``cmd/epp/runner/runner.go``, each type constant read in the
  package it is imported from), the alpha ones apart (refused without ``--allow-experimental-plugins``:
  ``ValidatePluginStability``, ``pkg/epp/framework/interface/plugin/registry.go``).
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance.epp import CONTROLLER_RUNTIME_TAG, EPP_TAG
from tpu_serving_tools.conformance.table import Table, save

FLAG = re.compile(r'\bfs\.\w*Var\w*\(\s*&[^,]+,\s*"([a-z][a-z0-9-]*)"')
REJECTED = re.compile(r"var deprecatedMetricFlags = map\[string\]struct\{\}\{(.*?)\n\}", re.S)
QUOTED = re.compile(r'"([a-z][a-z0-9-]*)"')
REGISTER = re.compile(r"fwkplugin\.Register\w*\(\s*(\w+)\.(\w+),\s*fwkplugin\.Stability(\w+)")
IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"github\.com/llm-d/llm-d-router/([\w/.-]+)"', re.M)
GROUP_NAME = re.compile(r'const GroupName = "([^"]+)"')
GROUP_VERSION = re.compile(r'var GroupVersion = v1\.GroupVersion\{Group: GroupName, Version: "([^"]+)"\}')
DEPRECATED_GV = re.compile(
    r'deprecatedSchemeGroupVersion\s*=\s*schema\.GroupVersion\{Group: "([^"]+)", Version: "([^"]+)"\}'
)
JSON_TAG = re.compile(r'`json:"([A-Za-z]+)[,"]')

OPTIONS = "pkg/epp/server/options.go"
LOGGING = "pkg/common/observability/logging/options.go"
ZAP = "pkg/log/zap/zap.go"
RUNNER = "cmd/epp/runner/runner.go"
REGISTER_GO = "apix/config/v1alpha1/zz_generated.register.go"
CONFIG_TYPES = "apix/config/v1alpha1/endpointpickerconfig_types.go"
LOADER = "pkg/epp/config/loader/configloader.go"


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True).stdout


def flags(source: str) -> set[str]:
    return {f"--{name}" for name in FLAG.findall(source)}


def rejected_flags(options: str) -> set[str]:
    """The metric flags ``Options.Validate`` refuses when they are set."""
    m = REJECTED.search(options)
    if m is None:
        raise SystemExit(f"{OPTIONS}: no deprecatedMetricFlags")
    return {f"--{name}" for name in QUOTED.findall(m.group(1))}


def _body(source: str, start: str) -> str:
    """The text of the Go block that opens on the line starting with ``start``, to its closing brace."""
    at = source.index(start)
    end = source.index("\n}\n", at)
    return source[at:end]


def config_keys(types: str) -> set[str]:
    """The top-level json names of ``EndpointPickerConfig`` (and the TypeMeta it inlines)."""
    body = _body(types, "type EndpointPickerConfig struct {")
    return {"apiVersion", "kind"} | set(JSON_TAG.findall(body))


def api_versions(register: str, loader: str) -> tuple[str, str]:
    """The EndpointPickerConfig apiVersion, and the deprecated one the loader still accepts."""
    group, version, old = GROUP_NAME.search(register), GROUP_VERSION.search(register), DEPRECATED_GV.search(loader)
    if group is None or version is None or old is None:
        raise SystemExit(f"no GroupName/GroupVersion in {REGISTER_GO}, or no deprecatedSchemeGroupVersion in {LOADER}")
    return f"{group.group(1)}/{version.group(1)}", f"{old.group(1)}/{old.group(2)}"


def _const(git_dir: Path, tag: str, package: str, const: str) -> str:
    """The string a Go constant of ``package`` holds, following a re-export (``X = otherpkg.X``) once or more."""
    files = (f":(glob){package}/*.go", f":(glob,exclude){package}/*_test.go")
    text = _git(git_dir, "grep", "-h", "-E", rf"\b{const}\s*=|^\s*(\w+\s+)?\"github\.com/llm-d/", tag, "--", *files)
    literal = {m.group(1) for m in re.finditer(rf'\b{const}\s*=\s*"([^"]+)"', text)}
    export = {(m.group(1), m.group(2)) for m in re.finditer(rf"\b{const}\s*=\s*(\w+)\.(\w+)\b", text)}
    if len(literal) + len(export) != 1:
        raise SystemExit(f"{package}.{const}: {len(literal) + len(export)} definitions")
    if literal:
        return literal.pop()
    alias, name = export.pop()
    imports = {a or path.rsplit("/", 1)[-1]: path for a, path in IMPORT.findall(text)}
    return _const(git_dir, tag, imports[alias], name)


def plugin_types(git_dir: Path, tag: str) -> dict[str, str]:
    """Plugin type -> stability (``Alpha``, ``Beta``...) of every plugin ``registerInTreePlugins`` registers."""
    runner = _git(git_dir, "show", f"{tag}:{RUNNER}")
    imports = {alias or path.rsplit("/", 1)[-1]: path for alias, path in IMPORT.findall(runner)}
    body = _body(runner, "func (r *Runner) registerInTreePlugins() {")
    if len(re.findall(r"fwkplugin\.Register\w*\(", body)) != len(REGISTER.findall(body)):
        raise SystemExit(f"{RUNNER}: a registration not of the form fwkplugin.Register*(pkg.Type, fwkplugin.Stability*")
    return {
        _const(git_dir, tag, imports[alias], const): stability for alias, const, stability in REGISTER.findall(body)
    }


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--epp-git-dir", type=Path, required=True, help="a git directory of llm-d/llm-d-router")
    parser.add_argument("--runtime-git-dir", type=Path, required=True, help="one of kubernetes-sigs/controller-runtime")
    args = parser.parse_args(argv)
    epp, rt = args.epp_git_dir, args.runtime_git_dir
    options = _git(epp, "show", f"{EPP_TAG}:{OPTIONS}")
    logging = _git(epp, "show", f"{EPP_TAG}:{LOGGING}")
    requires = _git(epp, "show", f"{EPP_TAG}:go.mod")
    if f"sigs.k8s.io/controller-runtime {CONTROLLER_RUNTIME_TAG}" not in requires:
        raise SystemExit(f"the EPP at {EPP_TAG} does not require controller-runtime {CONTROLLER_RUNTIME_TAG}")
    if "opts.LoggingOptions.AddFlags(fs)" not in options or "opts.ZapOptions.BindFlags(gofs)" not in logging:
        raise SystemExit(f"{OPTIONS} no longer adds the logging flags, or {LOGGING} the zap flags")
    zap = _git(rt, "show", f"{CONTROLLER_RUNTIME_TAG}:{ZAP}")
    current, deprecated = api_versions(
        _git(epp, "show", f"{EPP_TAG}:{REGISTER_GO}"), _git(epp, "show", f"{EPP_TAG}:{LOADER}")
    )
    plugins = plugin_types(epp, EPP_TAG)
    files = ", ".join((OPTIONS, LOGGING, RUNNER, REGISTER_GO, CONFIG_TYPES, LOADER))
    source = {
        "artefact": f"llm-d/llm-d-router@{EPP_TAG} ({_git(epp, 'rev-list', '-n1', EPP_TAG).strip()}) {files}; "
        f"kubernetes-sigs/controller-runtime@{CONTROLLER_RUNTIME_TAG} "
        f"({_git(rt, 'rev-list', '-n1', CONTROLLER_RUNTIME_TAG).strip()}) {ZAP}",
        "extracted": datetime.date.today().isoformat(),
        "by": "tools/conformance/extract_epp.py",
    }
    table = Table(
        "epp",
        EPP_TAG,
        source,
        frozenset(flags(options) | flags(logging) | flags(zap)),
        frozenset(),
        frozenset(config_keys(_git(epp, "show", f"{EPP_TAG}:{CONFIG_TYPES}"))),
        choices={
            "rejected flags": sorted(rejected_flags(options)),
            "plugins.type": sorted(plugins),
            "plugins.type alpha": sorted(t for t, s in plugins.items() if s == "Alpha"),
        },
        facts={"apiVersion": current, "apiVersion deprecated": deprecated, "kind": "EndpointPickerConfig"},
    )
    print(save(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
