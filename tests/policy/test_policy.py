"""Policy rules: every stack passes the mandatory ones; each rule catches its violating fixture."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

from tests.conftest import ALL_STACKS, ROOT, plan_of, run_module
from tpu_serving_policy.rules import ALLOWLIST, ALLOWLIST_FILE, RULES, evaluate, from_plan, load_allowlist

POLICY_PYTHON = ROOT / "policy" / ".venv" / "bin" / "python"


def plan_json(stack: str) -> dict:
    return copy.deepcopy(plan_of(stack).as_json())


def first(plan: dict, type_: str, where=lambda r: True) -> dict:
    return next(r for r in plan["resources"] if r["type"] == type_ and where(r))


def kind(plan: dict, k: str, name: str | None = None) -> dict:
    return next(
        r
        for r in plan["resources"]
        if r["inputs"].get("kind") == k and (name is None or r["inputs"]["metadata"]["name"] == name)
    )


def pod(obj: dict) -> dict:
    from tpu_serving_policy.rules import pod_specs

    return next(iter(pod_specs(obj["inputs"])))


def _set(path_fn, value):
    def mutate(plan):
        target, key = path_fn(plan)
        if value is ...:
            target.pop(key, None)
        else:
            target[key] = value

    return mutate


def _add_resource(type_, name, inputs):
    def mutate(plan):
        plan["resources"].append(
            {
                "urn": f"urn:pulumi:x::tpu-serving::{type_}::{name}",
                "type": type_,
                "name": name,
                "custom": True,
                "parent": None,
                "provider": None,
                "dependencies": [],
                "inputs": inputs,
                "protect": False,
            }
        )

    return mutate


LLAMA, SAX, DISAGG = "llama31-405b-v6e16", "saxml-175b-v5e32x2", "llama2-70b-disagg-v6e8x2"
VLLM = "vllm-llama33-70b-v5e16"
CLUSTER, POOL, BUCKET = "gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", "gcp:storage/bucket:Bucket"

FIXTURES = {
    "gke-workload-identity": (LLAMA, _set(lambda p: (first(p, CLUSTER)["inputs"], "workloadIdentityConfig"), ...)),
    "gke-metadata-server": (
        LLAMA,
        _set(lambda p: (first(p, POOL)["inputs"]["nodeConfig"]["workloadMetadataConfig"], "mode"), "GCE_METADATA"),
    ),
    "gke-shielded-nodes": (
        LLAMA,
        _set(lambda p: (first(p, POOL)["inputs"]["nodeConfig"]["shieldedInstanceConfig"], "enableSecureBoot"), False),
    ),
    "gke-node-service-account": (
        LLAMA,
        _set(
            lambda p: (first(p, POOL)["inputs"]["nodeConfig"], "serviceAccount"),
            "123-compute@developer.gserviceaccount.com",
        ),
    ),
    "gke-node-roles-only": (
        LLAMA,
        _set(lambda p: (first(p, "gcp:projects/iAMMember:IAMMember")["inputs"], "role"), "roles/container.admin"),
    ),
    "gke-deletion-protection": (LLAMA, _set(lambda p: (first(p, CLUSTER)["inputs"], "deletionProtection"), False)),
    "gke-private-nodes": (LLAMA, _set(lambda p: (first(p, CLUSTER)["inputs"], "privateClusterConfig"), ...)),
    # every example stack reaches its control plane at the DNS-based endpoint, with no external IP endpoint: the
    # fixture opens the external endpoint (the IP mode's cluster) and names no authorized network
    "gke-authorized-networks": (
        LLAMA,
        lambda plan: (
            _set(lambda p: (first(p, CLUSTER)["inputs"], "masterAuthorizedNetworksConfig"), ...)(plan),
            _set(lambda p: (first(p, CLUSTER)["inputs"], "privateClusterConfig"), {"enablePrivateNodes": True})(plan),
        ),
    ),
    "iam-no-basic-roles": (
        LLAMA,
        _add_resource(
            "gcp:serviceaccount/iAMMember:IAMMember", "bad", {"role": "roles/editor", "member": "user:a@example.com"}
        ),
    ),
    "iam-no-project-storage-roles": (
        SAX,
        _add_resource(
            "gcp:projects/iAMMember:IAMMember", "seed", {"role": "roles/storage.admin", "member": "serviceAccount:x"}
        ),
    ),
    "iam-storage-on-stack-buckets": (
        LLAMA,
        _set(
            lambda p: (first(p, "gcp:storage/bucketIAMMember:BucketIAMMember")["inputs"], "bucket"),
            "someone-elses-bucket",
        ),
    ),
    "gcs-uniform-access": (LLAMA, _set(lambda p: (first(p, BUCKET)["inputs"], "uniformBucketLevelAccess"), False)),
    "gcs-public-access-prevention": (
        LLAMA,
        _set(lambda p: (first(p, BUCKET)["inputs"], "publicAccessPrevention"), "inherited"),
    ),
    "gcs-checkpoints-protected": (
        LLAMA,
        _set(
            lambda p: (first(p, BUCKET, lambda r: r["inputs"]["labels"]["purpose"] == "checkpoints"), "protect"), False
        ),
    ),
    "k8s-no-open-load-balancer": (
        SAX,
        _set(lambda p: (kind(p, "Service", "sax-http-lb")["inputs"]["metadata"], "annotations"), ...),
    ),
    "k8s-privileges-allowlisted": (LLAMA, _set(lambda p: (pod(kind(p, "LeaderWorkerSet")), "hostNetwork"), True)),
    "k8s-tpu-pod-selects-slice": (
        SAX,
        _set(lambda p: (pod(kind(p, "JobSet"))["nodeSelector"], "cloud.google.com/gke-tpu-topology"), ...),
    ),
    "k8s-serving-probes-requests": (
        SAX,
        _set(lambda p: (pod(kind(p, "Deployment", "sax-http"))["containers"][0], "readinessProbe"), ...),
    ),
    "k8s-no-literal-credentials": (
        VLLM,
        lambda p: pod(kind(p, "LeaderWorkerSet"))["containers"][0]["env"].append({"name": "HF_TOKEN", "value": "hf_x"}),
    ),
    "k8s-hardened-pods": (VLLM, _set(lambda p: (pod(kind(p, "LeaderWorkerSet")), "securityContext"), ...)),
    "k8s-cpu-pool-memory-limits": (
        VLLM,
        _set(lambda p: (pod(kind(p, "Deployment"))["containers"][0]["resources"], "limits"), ...),
    ),
    "k8s-cpu-pool-non-root": (SAX, lambda p: None),  # sax-http keeps its image's user
    "k8s-mutable-image-tags": (
        SAX,
        _set(lambda p: (pod(kind(p, "Deployment", "sax-http"))["containers"][0], "image"), "example/sax-http"),
    ),
}


def test_policy_every_rule_has_a_fixture():
    assert set(FIXTURES) == {r.name for r in RULES}


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_policy_stacks_pass_every_mandatory_rule(stack):
    mandatory = [v for v in evaluate(from_plan(plan_json(stack))) if v.enforcement == "mandatory"]
    assert mandatory == []


@pytest.mark.parametrize("rule", [r for r in RULES], ids=[r.name for r in RULES])
def test_policy_rule_catches_its_fixture(rule):
    stack, mutate = FIXTURES[rule.name]
    plan = plan_json(stack)
    before = [v for v in evaluate(from_plan(plan)) if v.rule == rule.name]
    mutate(plan)
    after = [v for v in evaluate(from_plan(plan)) if v.rule == rule.name]
    if rule.enforcement == "mandatory":
        assert before == [] and after, f"{rule.name} did not catch its fixture"
    else:  # the stacks do not set the advisory options, so they are reported as they are
        assert after and all(v.enforcement == "advisory" for v in after)


def test_policy_allowlisted_privileges_pass_and_others_fail():
    plan = plan_json(DISAGG)
    assert not [v for v in evaluate(from_plan(plan)) if v.rule == "k8s-privileges-allowlisted"]
    jax = next(c for c in pod(kind(plan, "LeaderWorkerSet"))["containers"] if c["name"] == "jax-tpu")
    jax["securityContext"]["capabilities"]["add"].append("SYS_ADMIN")
    (v,) = [v for v in evaluate(from_plan(plan)) if v.rule == "k8s-privileges-allowlisted"]
    assert "capability:jax-tpu:SYS_ADMIN" in v.message


def test_policy_allowlist_is_each_backends_own_file():
    """The allowlist is the union of the backend packages' files, each entry tagged with its backend, and of
    the shared components' file (the gateway's endpoint picker, the host-maintenance gate)."""
    backends = ROOT / "components" / "backends"
    files = sorted(backends.glob(f"*/{ALLOWLIST_FILE}"))
    assert {f.parent.name for f in files} == {"jetstream", "pathways_job", "saxml", "vllm"}
    entries = [(f.parent.name, e) for f in files for e in json.loads(f.read_text())]
    shared = json.loads((ROOT / "components" / ALLOWLIST_FILE).read_text())
    assert len(entries) + len(shared) == len(ALLOWLIST) == 8
    for backend, e in entries:
        assert ALLOWLIST[(e["kind"], e["name"], e["finding"])].endswith(f"({backend})")
    assert [ALLOWLIST[(e["kind"], e["name"], e["finding"])][-12:] for e in shared] == ["(components)"] * 2
    # the saxml model servers' host network is allowed only through saxml's file
    assert ("JobSet", "sax-model-server-set", "hostNetwork") in ALLOWLIST


def test_policy_allowlist_refuses_a_backend_without_its_file_or_a_doubled_entry(tmp_path):
    import shutil

    copy_ = tmp_path / "components" / "backends"
    shutil.copytree(ROOT / "components" / "backends", copy_, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "components" / ALLOWLIST_FILE, copy_.parent / ALLOWLIST_FILE)
    assert len(load_allowlist(copy_)) == len(ALLOWLIST)
    saxml = copy_ / "saxml" / ALLOWLIST_FILE
    doubled = json.loads(saxml.read_text())
    saxml.write_text(json.dumps(doubled + doubled[:1]))
    with pytest.raises(RuntimeError, match="listed twice"):
        load_allowlist(copy_)
    saxml.unlink()
    with pytest.raises(RuntimeError, match=f"saxml has no {ALLOWLIST_FILE}"):
        load_allowlist(copy_)


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return run_module("tpu_serving_tools.policy_check", *args)


@pytest.mark.slow  # the policy pack in its own venv, twice: a CLI test (make test-slow)
def test_policy_cli_fails_on_a_violating_plan(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    plan = plan_json(LLAMA)
    good.write_text(json.dumps(plan))
    FIXTURES["gcs-public-access-prevention"][1](plan)
    bad.write_text(json.dumps(plan))
    ok = run_check("--plan", str(good))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    failed = run_check("--plan", str(bad))
    assert failed.returncode == 1 and "[mandatory] gcs-public-access-prevention" in failed.stdout


ENTRY_POINT_PROBE = r"""
import json, runpy, sys
import pulumi_policy
captured = {}
def record(self, name, policies, **kwargs):
    captured["name"] = name
    captured["policies"] = [(p.name, type(p).__name__, p.enforcement_level.value) for p in policies]
    # Exercise one adapted policy as CrossGuard would, without a server.
    lb = next(p for p in policies if p.name == "k8s-no-open-load-balancer")
    seen = []
    args = pulumi_policy.ResourceValidationArgs(
        "kubernetes:core/v1:Service", {"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "LoadBalancer"}},
        "urn:s", "s", pulumi_policy.PolicyResourceOptions(False, [], False, [], None, [], None), None, {}, {})
    lb.validate(args, lambda message, urn=None: seen.append(message))
    captured["lb_violations"] = seen
pulumi_policy.PolicyPack.__init__ = record
runpy.run_path(sys.argv[1], run_name="__main__")
print(json.dumps(captured))
"""


def test_policy_pack_entry_point_registers_every_rule():
    if not POLICY_PYTHON.exists():
        pytest.fail("policy/.venv is missing: run `make policy-venv` (make test does)")
    proc = subprocess.run(
        [str(POLICY_PYTHON), "-c", ENTRY_POINT_PROBE, str(ROOT / "policy" / "__main__.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    captured = json.loads(proc.stdout.strip().splitlines()[-1])
    assert captured["name"] == "tpu-serving"
    registered = {name: (kind_, level) for name, kind_, level in captured["policies"]}
    assert set(registered) == {r.name for r in RULES}
    for r in RULES:
        assert registered[r.name] == ("ResourceValidationPolicy" if r.check else "StackValidationPolicy", r.enforcement)
    assert captured["lb_violations"] == ["LoadBalancer reachable from the internet without loadBalancerSourceRanges"]


def test_policy_cli_reports_an_invalid_stack_without_traceback(tmp_path):
    import shutil

    from tpu_serving_tools import policy_check as check

    root = tmp_path / "project"
    shutil.copytree(ROOT / "stacks", root / "stacks")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, root / name)
    bad = root / "stacks" / "Pulumi.llama31-405b-v6e16.yaml"
    bad.write_text(bad.read_text().replace("slice: v6e-16", "slice: v6e-12"))
    assert check.main(["--stack", "llama31-405b-v6e16", "--root", str(root)]) == 2


@pytest.mark.parametrize(
    "weaken, finding",
    [
        (lambda c, p: c["securityContext"].pop("allowPrivilegeEscalation"), "allowPrivilegeEscalation is not false"),
        (lambda c, p: c["securityContext"]["capabilities"].pop("drop"), "capabilities are not dropped"),
        (lambda c, p: p.pop("automountServiceAccountToken"), "mounts a service account token"),
        (lambda c, p: p["securityContext"]["seccompProfile"].update(type="Unconfined"), "seccompProfile"),
    ],
    ids=["escalation", "drop", "token", "seccomp"],
)
def test_policy_hardened_pods_each_default_is_checked(weaken, finding):
    plan = plan_json(VLLM)
    assert not [v for v in evaluate(from_plan(plan)) if v.rule == "k8s-hardened-pods"]
    p = pod(kind(plan, "LeaderWorkerSet"))
    weaken(p["containers"][0], p)
    (v,) = [v for v in evaluate(from_plan(plan)) if v.rule == "k8s-hardened-pods"]
    assert finding in v.message and v.enforcement == "mandatory"


def test_policy_token_is_allowed_only_to_the_allowlisted_api_callers():
    plan = plan_json(SAX)
    publisher = pod(kind(plan, "Job"))
    assert publisher["automountServiceAccountToken"] is True  # allowlisted: it patches its state ConfigMap
    assert not [v for v in evaluate(from_plan(plan)) if v.rule == "k8s-hardened-pods"]
    publisher["containers"][0]["name"] = "other"
    (v,) = [v for v in evaluate(from_plan(plan)) if v.rule == "k8s-hardened-pods"]
    assert "service account token" in v.message


def test_policy_shared_buckets_are_accepted_and_others_named():
    plan = plan_json(LLAMA)
    grant = first(plan, "gcp:storage/bucketIAMMember:BucketIAMMember")
    grant["inputs"]["bucket"] = "team-weights"
    (v,) = [v for v in evaluate(from_plan(plan)) if v.rule == "iam-storage-on-stack-buckets"]
    assert "'team-weights'" in v.message and v.resource == f"stack {LLAMA}"
    _add_resource("tpu-serving:index:SharedBuckets", "llama405b-shared", {"bucketNames": ["team-weights"]})(plan)
    plan["resources"][-1]["custom"] = False
    grant["inputs"]["role"] = "roles/storage.objectViewer"
    assert not [v for v in evaluate(from_plan(plan)) if v.rule == "iam-storage-on-stack-buckets"]
    # a shared bucket is read only, and no bucket is granted to the public
    grant["inputs"]["role"] = "roles/storage.objectUser"
    (v,) = [v for v in evaluate(from_plan(plan)) if v.rule == "iam-storage-on-stack-buckets"]
    assert "roles/storage.objectUser on the shared bucket 'team-weights'" in v.message
    grant["inputs"].update(role="roles/storage.objectViewer", member="allUsers")
    (v,) = [v for v in evaluate(from_plan(plan)) if v.rule == "iam-storage-on-stack-buckets"]
    assert "granted to the public (allUsers)" in v.message
