"""Generate ``rules.json``: which inputs of each GCP resource type force a replacement, or are filled by the provider.

``python -m tpu_serving_tools.provider_rules.generate --git-dir DIR --ref TAG`` reads the Terraform provider's
Go schemas (``hashicorp/terraform-provider-google`` at ``TAG``, a local git directory) of the resource types
the stacks create, and writes, per Pulumi type token: the input paths marked ``ForceNew`` (a change replaces
the resource), ``Computed`` without ``Optional`` (output only) and ``Optional`` + ``Computed`` (the provider
may fill or normalise them). pulumi-gcp is bridged from the provider, so a Terraform field ``node_config`` is
the Pulumi input ``nodeConfig`` and a one-item block is an object. The Go source is parsed, not compiled:
``map[string]*schema.Schema{...}`` literals, the ``var``s and functions they reference, ``MergeSchemas`` and
nested ``Elem: &schema.Resource{Schema: ...}``.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tpu_serving_tools.cli import command_parser

RESOURCES: dict[str, tuple[str, str]] = {
    "gcp:container/cluster:Cluster": ("google/services/container", "ResourceContainerCluster"),
    "gcp:container/nodePool:NodePool": ("google/services/container", "ResourceContainerNodePool"),
    "gcp:storage/bucket:Bucket": ("google/services/storage", "ResourceStorageBucket"),
    "gcp:serviceaccount/account:Account": ("google/services/resourcemanager", "ResourceGoogleServiceAccount"),
    "gcp:projects/service:Service": ("google/services/resourcemanager", "ResourceGoogleProjectService"),
    "gcp:compute/address:Address": ("google/services/compute", "ResourceComputeAddress"),
    "gcp:compute/subnetwork:Subnetwork": ("google/services/compute", "ResourceComputeSubnetwork"),
    "gcp:compute/router:Router": ("google/services/compute", "ResourceComputeRouter"),
    "gcp:compute/routerNat:RouterNat": ("google/services/compute", "ResourceComputeRouterNat"),
    "gcp:compute/resourcePolicy:ResourcePolicy": ("google/services/compute", "ResourceComputeResourcePolicy"),
    "gcp:monitoring/alertPolicy:AlertPolicy": ("google/services/monitoring", "ResourceMonitoringAlertPolicy"),
    "gcp:monitoring/dashboard:Dashboard": ("google/services/monitoring", "ResourceMonitoringDashboard"),
    "gcp:logging/metric:Metric": ("google/services/logging", "ResourceLoggingMetric"),
    "gcp:artifactregistry/repository:Repository": (
        "google/services/artifactregistry",
        "ResourceArtifactRegistryRepository",
    ),
}
"""Pulumi type -> (package directory, resource function) of the Terraform provider."""

IAM_MEMBER_TYPES = (
    "gcp:projects/iAMMember:IAMMember",
    "gcp:serviceaccount/iAMMember:IAMMember",
    "gcp:storage/bucketIAMMember:BucketIAMMember",
)
"""IAM member resources: the shared ``IamMemberBaseSchema`` (google/tpgiamresource/resource_iam_member.go) plus
the parent's identifying field, which every IAM parent schema marks ForceNew."""
IAM_PARENT_FIELD = {
    "gcp:projects/iAMMember:IAMMember": "project",
    "gcp:serviceaccount/iAMMember:IAMMember": "service_account_id",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "bucket",
}

SCHEMA_MAP = "map[string]*schema.Schema{"


def git_show(git_dir: Path, ref: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{ref}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def git_ls(git_dir: Path, ref: str, directory: str) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", f"{ref}:{directory}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [f"{directory}/{n}" for n in out.split() if n.endswith(".go") and not n.endswith("_test.go")]


def skip_literal(text: str, i: int) -> int:
    """The index of the last character of the string, rune or comment starting at ``i`` (``i`` itself when
    none starts there)."""
    c = text[i]
    if c == '"':
        i += 1
        while text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return i
    if c == "`":
        return text.index("`", i + 1)
    if c == "'":
        return text.index("'", i + 2)  # a rune literal such as '"' or '\''
    if text.startswith("//", i):
        end = text.find("\n", i)
        return (end if end >= 0 else len(text)) - 1
    if text.startswith("/*", i):
        return text.index("*/", i) + 1
    return i


def matching(text: str, open_at: int) -> int:
    """Index of the brace closing the one at ``open_at`` (strings and comments skipped)."""
    depth, i = 0, open_at
    while i < len(text):
        i = skip_literal(text, i)
        if text[i] in "{(":
            depth += 1
        elif text[i] in "})":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced")


def top_level_items(body: str) -> list[tuple[str, str]]:
    """``Key: value`` pairs at the top level of a composite literal's body."""
    items, i, depth, start = [], 0, 0, 0
    parts: list[str] = []
    while i < len(body):
        j = skip_literal(body, i)
        if j == i:
            c = body[i]
            if c in "{([":
                depth += 1
            elif c in "})]":
                depth -= 1
            elif c == "," and depth == 0:
                parts.append(body[start:i])
                start = i + 1
        i = j + 1
    parts.append(body[start:])
    for part in parts:
        part = re.sub(r"^(\s*//[^\n]*\n)+", "", part).strip()  # leading comment lines only
        m = re.match(r'^("?[\w.]+"?)\s*:\s*(.*)$', part, re.S)
        if m:
            items.append((m.group(1).strip('"'), m.group(2).strip()))
    return items


@dataclass
class Source:
    git_dir: Path
    ref: str
    files: dict[str, str] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)

    def package(self, directory: str) -> str:
        for path in git_ls(self.git_dir, self.ref, directory):
            if path not in self.files:
                self.files[path] = git_show(self.git_dir, self.ref, path)
        return directory

    def definition(self, directory: str, name: str) -> str:
        """The literal a ``var name =`` or ``func name(...)`` of the package returns (its text)."""
        short = name.split(".")[-1]
        dirs = [directory, "google/tpgresource", "google/tpgiamresource"]
        for d in dirs:
            self.package(d)
            for path, text in self.files.items():
                if not path.startswith(d + "/"):
                    continue
                m = (
                    re.search(rf"(?m)^var {re.escape(short)}\s*=\s*", text)
                    or re.search(rf"(?m)^\t{re.escape(short)}\s*=\s*", text)  # inside a var ( ... ) block
                    or re.search(rf"(?m)^func {re.escape(short)}\([^)]*\)[^{{]*\{{", text)
                )
                if m:
                    self.read.add(path)
                    body = text[m.end() :]
                    if m.group(0).startswith("func"):
                        r = re.search(r"\breturn\s+", body)
                        body = body[r.end() :] if r else body
                    return body
        raise KeyError(f"{name} not found in {dirs}")


def _literal(expr: str) -> str:
    """The text of the first composite literal in ``expr`` (from its type to its closing brace)."""
    open_at = expr.index("{")
    return expr[: matching(expr, open_at) + 1]


def schema_map(src: Source, directory: str, expr: str) -> dict[str, str]:
    """Field name -> schema expression of a ``Schema:`` value (a map literal, a var, a call, MergeSchemas)."""
    expr = expr.strip()
    if expr.startswith(SCHEMA_MAP):
        lit = _literal(expr)
        return dict(top_level_items(lit[len(SCHEMA_MAP) : -1]))
    m = re.match(r"^(?:tpgresource\.)?MergeSchemas\(", expr)
    if m:
        args = expr[m.end() - 1 : matching(expr, m.end() - 1) + 1][1:-1]
        out: dict[str, str] = {}
        for _, arg in [("", a) for a in _split_args(args)]:
            out.update(schema_map(src, directory, arg))
        return out
    name = re.match(r"^([\w.]+)", expr)
    if name:
        return schema_map(src, directory, src.definition(directory, name.group(1)))
    raise ValueError(f"cannot read schema {expr[:60]!r}")


def _split_args(args: str) -> list[str]:
    return [v for _, v in top_level_items(",".join(f"x: {a}" for a in _raw_split(args)))]


def _raw_split(args: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, c in enumerate(args):
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(args[start:i].strip())
            start = i + 1
    out.append(args[start:].strip())
    return [a for a in out if a]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def walk(src: Source, directory: str, fields: dict[str, str], prefix: str, out: dict[str, set[str]]) -> None:
    for name, expr in fields.items():
        expr = expr.strip()
        if not expr.startswith(("{", "&schema.Schema{", "schema.Schema{")):
            ref = re.match(r"^([\w.]+)\(?", expr)
            if not ref:
                continue
            expr = src.definition(directory, ref.group(1)).strip()
        lit = _literal(expr)
        attrs = dict(top_level_items(lit[lit.index("{") + 1 : -1]))
        path = f"{prefix}{camel(name)}"
        elem_text = attrs.get("Elem", "")
        is_block = elem_text.startswith("&schema.Resource{") or (
            bool(elem_text) and not elem_text.startswith("&schema.Schema{") and _is_resource(src, directory, elem_text)
        )
        if attrs.get("ForceNew") == "true":
            # SDKv2: on a block (a list of nested resources) ForceNew applies to adding or removing it; its
            # fields carry their own. On a list of values it applies to every element.
            out["forceNewBlocks" if is_block else "forceNew"].add(path)
        if attrs.get("Computed") == "true":
            out["optionalComputed" if attrs.get("Optional") == "true" else "computed"].add(path)
        elem = attrs.get("Elem", "")
        if elem:
            if not elem.startswith(("&schema.Resource{", "&schema.Schema{")):
                ref = re.match(r"^([\w.]+)", elem)
                elem = src.definition(directory, ref.group(1)).strip() if ref else ""
            if elem.startswith("&schema.Resource{"):
                res = dict(top_level_items(_literal(elem)[len("&schema.Resource{") : -1]))
                if "Schema" in res:
                    walk(src, directory, schema_map(src, directory, res["Schema"]), f"{path}.", out)


def _is_resource(src: Source, directory: str, elem: str) -> bool:
    ref = re.match(r"^([\w.]+)", elem)
    return ref is not None and src.definition(directory, ref.group(1)).lstrip().startswith("&schema.Resource{")


def resource_rules(src: Source, directory: str, function: str) -> dict[str, set[str]]:
    src.package(directory)
    body = src.definition(directory, function)
    res = dict(top_level_items(_literal(body)[len("&schema.Resource{") : -1]))
    out: dict[str, set[str]] = {
        "forceNew": set(),
        "forceNewBlocks": set(),
        "computed": set(),
        "optionalComputed": set(),
    }
    walk(src, directory, schema_map(src, directory, res["Schema"]), "", out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument(
        "--git-dir", type=Path, required=True, help="a git directory of hashicorp/terraform-provider-google"
    )
    parser.add_argument("--ref", required=True, help="the release tag, e.g. v7.45.0")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("rules.json"))
    args = parser.parse_args(argv)
    src = Source(args.git_dir, args.ref)
    commit = subprocess.run(
        ["git", "--git-dir", str(args.git_dir), "rev-list", "-n1", args.ref], check=True, capture_output=True, text=True
    ).stdout.strip()
    types: dict[str, dict[str, list[str]]] = {}
    for token, (directory, function) in RESOURCES.items():
        types[token] = {k: sorted(v) for k, v in resource_rules(src, directory, function).items()}
    iam: dict[str, set[str]] = {
        "forceNew": set(),
        "forceNewBlocks": set(),
        "computed": set(),
        "optionalComputed": set(),
    }
    walk(src, "google/tpgiamresource", schema_map(src, "google/tpgiamresource", "IamMemberBaseSchema"), "", iam)
    for token in IAM_MEMBER_TYPES:
        rules = {k: set(v) for k, v in iam.items()}
        rules["forceNew"].add(camel(IAM_PARENT_FIELD[token]))
        types[token] = {k: sorted(v) for k, v in rules.items()}
    doc = {
        "provenance": {
            "repository": "hashicorp/terraform-provider-google",
            "ref": args.ref,
            "commit": commit,
            "files": sorted(src.read),
            "generated": datetime.date.today().isoformat(),
            "by": "tools/provider_rules/generate.py",
            "note": (
                "pulumi-gcp is bridged from terraform-provider-google-beta; pulumi-gcp 10.2.0's upstream release was "
                "not reachable here, so these rules are the GA provider's at the newest release in reach"
            ),
        },
        "types": types,
    }
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}: {len(types)} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
