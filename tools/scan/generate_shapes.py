"""Generate ``tf_shapes.json``: the Terraform type and block shapes of each GCP resource type the stacks create.

``python -m tpu_serving_tools.scan.generate_shapes --git-dir DIR --ref REF`` reads pulumi-gcp's
``provider/cmd/pulumi-resource-gcp/bridge-metadata.json`` (``pulumi/pulumi-gcp`` at ``REF``, a local git
directory). That file is written by pulumi-terraform-bridge and maps each Terraform resource to its Pulumi
token (``auto-aliasing.resources.<tf type>.current``) and records, per nested field, ``maxItemsOne``: a
Terraform block of at most one item, which Pulumi flattens to an object. A block with ``maxItemsOne: false``
stays a list, and Pulumi names it in the plural (``maintenance_exclusion`` -> ``maintenanceExclusions``).
The converter (:mod:`tpu_serving_tools.scan.tfplan`) undoes both, so a Pulumi input becomes the Terraform
plan value Checkov reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tpu_serving_tools.cli import command_parser

TOKENS: tuple[str, ...] = (
    "gcp:artifactregistry/repository:Repository",
    "gcp:compute/address:Address",
    "gcp:compute/resourcePolicy:ResourcePolicy",
    "gcp:compute/router:Router",
    "gcp:compute/routerNat:RouterNat",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:container/cluster:Cluster",
    "gcp:container/nodePool:NodePool",
    "gcp:logging/metric:Metric",
    "gcp:monitoring/alertPolicy:AlertPolicy",
    "gcp:monitoring/dashboard:Dashboard",
    "gcp:projects/iAMMember:IAMMember",
    "gcp:projects/service:Service",
    "gcp:serviceaccount/account:Account",
    "gcp:serviceaccount/iAMMember:IAMMember",
    "gcp:storage/bucket:Bucket",
    "gcp:storage/bucketIAMMember:BucketIAMMember",
)
"""Every GCP resource type a stack can create (a plan with another type fails the conversion)."""

METADATA = "provider/cmd/pulumi-resource-gcp/bridge-metadata.json"
OUT = Path(__file__).with_name("tf_shapes.json")


def shape(fields: dict[str, Any]) -> dict[str, Any]:
    """``{tf field: {"one": maxItemsOne, "fields": {...}}}`` of the nested fields of a metadata entry."""
    return {
        name: {"one": bool(spec.get("maxItemsOne")), "fields": shape(spec.get("elem", {}).get("fields", {}))}
        for name, spec in sorted(fields.items())
    }


def shapes(metadata: dict[str, Any]) -> dict[str, Any]:
    by_token = {v["current"]: (k, v) for k, v in metadata["auto-aliasing"]["resources"].items()}
    missing = [t for t in TOKENS if t not in by_token]
    if missing:
        raise SystemExit(f"not in the bridge metadata: {', '.join(missing)}")
    return {t: {"terraform": by_token[t][0], "fields": shape(by_token[t][1].get("fields", {}))} for t in TOKENS}


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--git-dir", type=Path, required=True, help="a git directory of pulumi/pulumi-gcp")
    parser.add_argument("--ref", default="HEAD", help="the commit or tag to read")
    args = parser.parse_args(argv)
    git = ["git", "--git-dir", str(args.git_dir)]
    commit = subprocess.run([*git, "rev-parse", args.ref], check=True, capture_output=True, text=True).stdout.strip()
    text = subprocess.run([*git, "show", f"{commit}:{METADATA}"], check=True, capture_output=True, text=True).stdout
    doc = {
        "provenance": {
            "by": "tools/scan/generate_shapes.py",
            "repository": "pulumi/pulumi-gcp",
            "commit": commit,
            "file": METADATA,
        },
        "types": shapes(json.loads(text)),
    }
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(TOKENS)} types, pulumi/pulumi-gcp@{commit[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
