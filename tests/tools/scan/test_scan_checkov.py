"""Checkov itself over the stacks and over hardened and weakened copies of each resource type (marker ``slow``:
Checkov runs from its own environment, ``.scan-venv``, which ``make test-slow`` installs).

The weakened copies prove the conversion faithful: if a Pulumi input did not reach the Terraform argument
Checkov reads, the check would not flip."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, plan_of
from tpu_serving_tools.scan import run as scan
from tpu_serving_tools.scan.pods import extracted_pods
from tpu_serving_tools.scan.tfplan import terraform_plan

pytestmark = pytest.mark.slow

CHECKOV = ROOT / ".scan-venv" / "bin" / "checkov"
VLLM = "vllm-llama33-70b-v5e16"

Edit = Callable[[dict], None]


def first(plan: dict, type_: str) -> dict:
    return next(r["inputs"] for r in plan["resources"] if r["type"] == type_)


CLUSTER, POOL, BUCKET = "gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", "gcp:storage/bucket:Bucket"
BUCKET_IAM, PROJECT_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember", "gcp:projects/iAMMember:IAMMember"

# (name, GCP type, edit that hardens, edit that weakens, the checks that must pass hardened and fail weakened)
GCP_CASES: list[tuple[str, str, Edit, Edit, set[str]]] = [
    (
        "private-nodes",
        CLUSTER,
        lambda c: None,
        lambda c: c.pop("privateClusterConfig"),
        {"CKV_GCP_25", "CKV_GCP_64"},
    ),
    ("authorized-networks", CLUSTER, lambda c: None, lambda c: c.pop("masterAuthorizedNetworksConfig"), {"CKV_GCP_20"}),
    (
        "client-certificates",
        CLUSTER,
        lambda c: c.update(masterAuth={"clientCertificateConfig": {"issueClientCertificate": False}}),
        lambda c: c.update(masterAuth={"clientCertificateConfig": {"issueClientCertificate": True}}),
        {"CKV_GCP_13"},
    ),
    (
        "binary-authorization",
        CLUSTER,
        lambda c: c.update(binaryAuthorization={"evaluationMode": "PROJECT_SINGLETON_POLICY_ENFORCE"}),
        lambda c: None,
        {"CKV_GCP_66"},
    ),
    (
        "metadata-server",
        POOL,
        lambda p: None,
        lambda p: p["nodeConfig"]["workloadMetadataConfig"].update(mode="GCE_METADATA"),
        {"CKV_GCP_69"},
    ),
    (
        "secure-boot",
        POOL,
        lambda p: None,
        lambda p: p["nodeConfig"]["shieldedInstanceConfig"].update(enableSecureBoot=False),
        {"CKV_GCP_68"},
    ),
    ("auto-repair", POOL, lambda p: None, lambda p: p["management"].update(autoRepair=False), {"CKV_GCP_9"}),
    ("uniform-access", BUCKET, lambda b: None, lambda b: b.update(uniformBucketLevelAccess=False), {"CKV_GCP_29"}),
    (
        "public-access-prevention",
        BUCKET,
        lambda b: None,
        lambda b: b.update(publicAccessPrevention="inherited"),
        {"CKV_GCP_114"},
    ),
    ("versioning", BUCKET, lambda b: b.update(versioning={"enabled": True}), lambda b: None, {"CKV_GCP_78"}),
    ("bucket-not-public", BUCKET_IAM, lambda g: None, lambda g: g.update(member="allUsers"), {"CKV_GCP_28"}),
    ("no-basic-roles", PROJECT_IAM, lambda g: None, lambda g: g.update(role="roles/editor"), {"CKV_GCP_117"}),
]


def pod_template(stack: str) -> dict:
    objects = [r.inputs for r in plan_of(stack).resources if r.custom and "kind" in r.inputs]
    return extracted_pods(objects)[0]


def _container(p: dict) -> dict:
    return p["spec"]["containers"][0]


POD_CASES: list[tuple[str, Edit, set[str]]] = [
    ("escalation", lambda p: _container(p)["securityContext"].pop("allowPrivilegeEscalation"), {"CKV_K8S_20"}),
    (
        "capabilities",
        lambda p: _container(p)["securityContext"]["capabilities"].pop("drop"),
        {"CKV_K8S_28", "CKV_K8S_37"},
    ),
    ("seccomp", lambda p: p["spec"].pop("securityContext"), {"CKV_K8S_31"}),
    ("token", lambda p: p["spec"].pop("automountServiceAccountToken"), {"CKV_K8S_38"}),
]


def checkov(files: list[Path]) -> dict[str, dict[str, bool]]:
    """file name -> check ID -> passed, for every check Checkov ran on the file."""
    out: dict[str, dict[str, bool]] = {f.name: {} for f in files}
    for report in scan.run_checkov(str(CHECKOV), files):
        for outcome, passed in (("passed_checks", True), ("failed_checks", False)):
            for r in report.get("results", {}).get(outcome, []):
                out[Path(r["file_abs_path"]).name][r["check_id"]] = passed
    return out


@pytest.fixture(scope="module")
def flips(tmp_path_factory) -> dict[str, dict[str, bool]]:
    if not CHECKOV.is_file():
        pytest.fail(f"{CHECKOV} is missing: make scan-venv")
    root = tmp_path_factory.mktemp("scan")
    files = []
    for name, type_, harden, weaken, _ in GCP_CASES:
        for variant, edit in (("hardened", harden), ("weakened", weaken)):
            plan = copy.deepcopy(plan_of(VLLM).as_json())
            plan["resources"] = [r for r in plan["resources"] if r["type"] == type_][:1]
            edit(plan["resources"][0]["inputs"])
            path = root / f"{name}-{variant}.json"
            path.write_text(json.dumps(terraform_plan(plan)))
            files.append(path)
    for name, weaken, _ in POD_CASES:
        for variant in ("hardened", "weakened"):
            pod = copy.deepcopy(pod_template(VLLM))
            if variant == "weakened":
                weaken(pod)
            path = root / f"pod-{name}-{variant}.yaml"
            path.write_text(yaml.safe_dump(pod))
            files.append(path)
    return checkov(files)


@pytest.mark.parametrize("case", GCP_CASES, ids=[c[0] for c in GCP_CASES])
def test_scan_gcp_checks_flip_between_hardened_and_weakened(flips, case):
    name, _, _, _, checks = case
    hardened, weakened = flips[f"{name}-hardened.json"], flips[f"{name}-weakened.json"]
    assert {c: hardened.get(c) for c in checks} == dict.fromkeys(checks, True)
    assert {c: weakened.get(c) for c in checks} == dict.fromkeys(checks, False)


@pytest.mark.parametrize("case", POD_CASES, ids=[c[0] for c in POD_CASES])
def test_scan_pod_checks_flip_between_hardened_and_weakened(flips, case):
    name, _, checks = case
    hardened, weakened = flips[f"pod-{name}-hardened.yaml"], flips[f"pod-{name}-weakened.yaml"]
    assert {c: hardened.get(c) for c in checks} == dict.fromkeys(checks, True)
    assert {c: weakened.get(c) for c in checks} == dict.fromkeys(checks, False)


def tool(*args: str) -> subprocess.CompletedProcess[str]:
    """``tpu-serving scan`` in its own process (a preview closes its process's event loop when done)."""
    cmd = [sys.executable, "-m", "tpu_serving_tools.cli", "scan", "--root", str(ROOT), "--checkov", str(CHECKOV)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, check=False)


def test_scan_every_stack_passes_with_only_baselined_findings_and_no_stale_entry(tmp_path):
    page = tmp_path / "security.md"
    page.write_text((ROOT / "docs" / "security.md").read_text())
    done = tool("--stale-fails", "--readme", str(page))
    assert done.returncode == 0, done.stdout + done.stderr
    # the Security page lists these very results
    assert page.read_text() == (ROOT / "docs" / "security.md").read_text(), (
        "docs/security.md scan results are stale: make scan-readme"
    )
    baseline, *lines = done.stdout.splitlines()
    # what matters is above (no finding outside the baseline, no stale entry: --stale-fails); the count is the
    # file's own, so a stack whose findings need new entries passes once they are reviewed and added
    entries = yaml.safe_load((ROOT / "tools/scan/baseline.yaml").read_text())["accepted"]
    assert baseline.startswith("baseline: ") and baseline.endswith(f"tools/scan/baseline.yaml ({len(entries)} entries)")
    assert len(lines) == len(list((ROOT / "stacks").glob("Pulumi.*.yaml")))
    assert all(line.endswith(", 0 failed outside the baseline") for line in lines)


def test_scan_fails_on_a_finding_outside_the_baseline_and_on_a_stale_entry(tmp_path):
    narrow = tmp_path / "baseline.yaml"
    entries = yaml.safe_load((ROOT / "tools/scan/baseline.yaml").read_text())["accepted"]
    kept = [e for e in entries if e["check"] != "CKV_K8S_43"]  # digests: every stack has a finding
    narrow.write_text(yaml.safe_dump({"accepted": kept}))
    refused = tool("--stack", VLLM, "--baseline", str(narrow))
    assert refused.returncode == 1
    assert "CKV_K8S_43 Pod.vllm-llama70b.LeaderWorkerSet/vllm/leader" in refused.stdout
    # one stack alone leaves the other stacks' entries unmatched: stale, which --stale-fails refuses
    stale = tool("--stack", VLLM, "--stale-fails")
    assert stale.returncode == 1 and "error: baseline entry matched nothing: CKV_K8S_19" in stale.stdout


def test_scan_a_users_program_from_another_folder(tmp_path):
    from tests.test_package import DEPLOYMENT_PROGRAM, users_project

    project = users_project(tmp_path, "myinfra", DEPLOYMENT_PROGRAM, "dev")
    cmd = [sys.executable, "-m", "tpu_serving_tools.cli", "scan", "--root", str(project), "--checkov", str(CHECKOV)]
    refused = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp_path)
    # the shipped baseline accepts the library's own findings, not this program's choices: its RBAC without Google
    # Groups (no cluster.securityGroup). Its control plane, reached at the DNS-based endpoint by default, has no
    # external IP endpoint, and CKV_GCP_20 passes.
    assert refused.returncode == 1, refused.stdout + refused.stderr
    lines = refused.stdout.splitlines()[1:]
    assert lines[0].startswith("dev: ") and lines[0].endswith(", 1 failed outside the baseline")
    assert [line.split(":")[0] for line in lines[1:2]] == ["  CKV_GCP_65 google_container_cluster.mine-cluster"]
    assert lines[2].startswith("note: ") and "--stale-fails" in lines[2]
    assert (project / "build" / "dev" / "scan" / "terraform-plan.json").is_file()
    own = tmp_path / "baseline.yaml"
    entries = yaml.safe_load((ROOT / "tools/scan/baseline.yaml").read_text())["accepted"]
    entries += [
        {"check": c, "resource": "google_container_cluster.mine-cluster", "reason": "dev only"} for c in ("CKV_GCP_65",)
    ]
    own.write_text(yaml.safe_dump({"accepted": entries}))
    accepted = subprocess.run([*cmd, "--baseline", str(own)], capture_output=True, text=True, check=False)
    assert accepted.returncode == 0 and "0 failed outside the baseline" in accepted.stdout
