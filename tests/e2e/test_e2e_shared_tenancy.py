"""``Tenancy(shared_cluster=True)`` on a real API server, applied by the real engine and Kubernetes provider
(tools/e2e/stack_run.py): the PriorityClasses ``tpu-serving-online`` and ``tpu-serving-batch`` declared by two
``Tenancy`` of one program (two namespaces, one provider), and by two stacks of one cluster (the existing-cluster
tenants), each ``pulumi up`` passes, and a destroy of one leaves the classes to the other; a class made by a plain
create is taken over, and one of another value is a conflict. Two plain ``PriorityClass`` of one name fail with
AlreadyExists.

The program is written by the test into its folder. Marked ``e2e``: skipped without the toolchain's JSON.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from tests.conftest import require_toolchain
from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain
from tpu_serving_tools.e2e.kube import wait_for
from tpu_serving_tools.e2e.stack_run import Engine, StackRun, engine_errors, project_dir

pytestmark = pytest.mark.e2e

CLASSES = {"tpu-serving-online": 100000, "tpu-serving-batch": 10000}

PROGRAM = textwrap.dedent(
    """
    import pulumi
    import pulumi_kubernetes as k8s

    from tpu_serving import Tenancy, TenancyArgs

    config = pulumi.Config()
    provider = k8s.Provider(
        "k8s",
        kubeconfig=config.require("kubeconfig"),
        enable_server_side_apply=config.get_bool("serverSideApply") is not False,
    )
    for ns in config.require_object("namespaces"):
        namespace = k8s.core.v1.Namespace(ns, metadata={"name": ns}, opts=pulumi.ResourceOptions(provider=provider))
        Tenancy(
            ns,
            TenancyArgs(namespace=ns, tpu_chips=4, serving_preempts=False, shared_cluster=True),
            opts=pulumi.ResourceOptions(providers=[provider], depends_on=[namespace]),
        )
    """
)


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    require_toolchain()
    with ControlPlane(run_timeout=1200) as plane:
        yield plane


def engine() -> Engine:
    tools = load_toolchain()
    return Engine(tools["pulumi"], tools["pulumi-resource-kubernetes"])


def stack(cp: ControlPlane, work: Path, project: str, namespaces: list[str], **config: Any) -> StackRun:
    """A stack of a program declaring one ``Tenancy(shared_cluster=True)`` per namespace, in ``work``'s backend."""
    folder = project_dir(work / project, project, "e2e", {"kubeconfig": str(cp.kubeconfig), "namespaces": namespaces,
                                                          **config})  # fmt: skip
    (folder / "__main__.py").write_text(PROGRAM)
    run = StackRun(engine(), folder, "e2e", folder / "__main__.py", work)
    run.kubeconfig = cp.kubeconfig
    return run


def live_classes(cp: ControlPlane) -> dict[str, tuple[int, str]]:
    """The two classes in the cluster: value and preemptionPolicy."""
    found = {}
    for name in CLASSES:
        obj = cp.kube.find("scheduling.k8s.io/v1", "PriorityClass", name)
        if obj is not None:
            found[name] = (obj["value"], obj["preemptionPolicy"])
    return found


def clear_classes(cp: ControlPlane) -> None:
    """Delete the two classes (retained by an earlier test), so the next ``up`` finds them absent."""
    for name in CLASSES:
        if cp.kube.find("scheduling.k8s.io/v1", "PriorityClass", name) is not None:
            cp.kube.delete("scheduling.k8s.io/v1", "PriorityClass", name)
    wait_for("the classes gone", lambda: not live_classes(cp), timeout=30)


def managers(cp: ControlPlane, name: str) -> list[tuple[str, str]]:
    obj = cp.kube.get("scheduling.k8s.io/v1", "PriorityClass", name)
    return sorted((m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields") or ())


def of_type(run: StackRun, suffix: str) -> list[dict[str, Any]]:
    return [r for r in run.resources() if str(r.get("type", "")).endswith(suffix)]


WANTED = {name: (value, "Never") for name, value in CLASSES.items()}


def test_e2e_shared_tenancy_two_namespaces_of_one_program(cp: ControlPlane, tmp_path: Path):
    """Two ``Tenancy`` of one program and one provider: one ``pulumi up`` declares each class twice, and passes."""
    clear_classes(cp)
    run = stack(cp, tmp_path, "two-namespaces", ["team-a", "team-b"])
    try:
        change = run.up()
    except auto.CommandError as err:
        pytest.fail(f"pulumi up failed:\n{engine_errors(str(err))}")
    assert change.changed.get("create", 0) > 0
    assert live_classes(cp) == WANTED  # the server-side apply created them
    patches = of_type(run, "scheduling.k8s.io/v1:PriorityClassPatch")
    assert len(patches) == 4 and all(r.get("retainOnDelete") for r in patches), patches
    assert not of_type(run, "scheduling.k8s.io/v1:PriorityClass")
    # each declaration is a server-side apply of its own field manager, sharing the identical fields
    assert len({m for m, op in managers(cp, "tpu-serving-online") if op == "Apply"}) >= 2
    assert not run.preview(refresh=True).changed  # a second preview proposes nothing
    run.destroy()
    assert live_classes(cp) == WANTED  # retained: other tenants' pods name them


def test_e2e_shared_tenancy_two_stacks_of_one_cluster(cp: ControlPlane, tmp_path: Path):
    """Two tenant stacks of one existing cluster, each with its ``Tenancy``: both ``up`` pass, a destroy of one
    leaves the classes, the other's next ``up`` proposes nothing, and its destroy leaves them too."""
    clear_classes(cp)
    first = stack(cp, tmp_path, "tenant-c", ["team-c"])
    second = stack(cp, tmp_path, "tenant-d", ["team-d"])
    first.up()
    try:
        second.up()
    except auto.CommandError as err:
        pytest.fail(f"the second tenant's pulumi up failed:\n{engine_errors(str(err))}")
    assert live_classes(cp) == WANTED
    first.destroy()
    assert live_classes(cp) == WANTED
    assert not second.preview(refresh=True).changed
    second.destroy()
    assert live_classes(cp) == WANTED


PLAIN = textwrap.dedent(
    """
    import pulumi
    import pulumi_kubernetes as k8s

    config = pulumi.Config()
    provider = k8s.Provider("k8s", kubeconfig=config.require("kubeconfig"), enable_server_side_apply=False)
    for n in ("a", "b"):
        k8s.scheduling.v1.PriorityClass(
            f"{n}-shared",
            metadata={"name": "e2e-shared"},
            value=5,
            preemption_policy="Never",
            opts=pulumi.ResourceOptions(provider=provider, retain_on_delete=True),
        )
    """
)


def test_e2e_shared_tenancy_plain_class_declared_twice_is_already_exists(cp: ControlPlane, tmp_path: Path):
    """What the code before the fix declared, two retained plain ``PriorityClass`` of one name, fails ``pulumi up``:
    pulumi-kubernetes v4.29.0 and later create with a client-side create (pulumi/pulumi-kubernetes#4278, await.go
    ``Creation``: ``client.Create`` unless the provider's ``upsertExistingObjects``), and the API server refuses the
    second. The toolchain's provider (a v4.25.0 pseudo-version) predates it and upserts in server-side apply mode;
    its client-side apply mode sends the same create, shown here."""
    folder = project_dir(tmp_path / "plain", "plain", "e2e", {"kubeconfig": str(cp.kubeconfig)})
    (folder / "__main__.py").write_text(PLAIN)
    run = StackRun(engine(), folder, "e2e", folder / "__main__.py", tmp_path)
    with pytest.raises(auto.CommandError) as failed:
        run.up()
    assert 'priorityclasses.scheduling.k8s.io "e2e-shared" already exists' in engine_errors(str(failed.value))
    run.destroy()


def test_e2e_shared_tenancy_takes_over_a_class_made_by_a_plain_create(cp: ControlPlane, tmp_path: Path):
    """A tenant deployed before the fix made the classes with a plain ``PriorityClass``: with pulumi-kubernetes
    v4.29.0 and later a client-side create under the field manager ``pulumi-kubernetes`` (operation Update; await.go
    ``Creation``). The Patch applies the same values beside it: no conflict, and the object stays."""
    clear_classes(cp)
    for name, value in CLASSES.items():
        cp.kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value,
            "preemptionPolicy": "Never", "globalDefault": False}, query="fieldManager=pulumi-kubernetes")  # fmt: skip
    run = stack(cp, tmp_path, "tenant-e", ["team-e"])
    try:
        run.up()
    except auto.CommandError as err:
        pytest.fail(f"pulumi up over the existing classes failed:\n{engine_errors(str(err))}")
    assert ("pulumi-kubernetes", "Update") in managers(cp, "tpu-serving-online")
    assert any(m.startswith("pulumi-kubernetes-") and op == "Apply" for m, op in managers(cp, "tpu-serving-online"))
    run.destroy()
    assert live_classes(cp) == WANTED


def test_e2e_shared_tenancy_a_class_of_another_value_is_a_conflict(cp: ControlPlane, tmp_path: Path):
    """A class of the name with another ``value`` (another release's, or not ours): the Patch's apply is a field
    conflict (no ``pulumi.com/patchForce``), ``pulumi up`` fails and the class is left as it was."""
    clear_classes(cp)
    cp.kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "tpu-serving-online"},
        "value": 90000, "preemptionPolicy": "Never"}, query="fieldManager=pulumi-kubernetes")  # fmt: skip
    run = stack(cp, tmp_path, "tenant-x", ["team-x"])
    with pytest.raises(auto.CommandError) as failed:
        run.up()
    said = engine_errors(str(failed.value))
    assert "Server-Side Apply field conflict detected" in said, said
    assert 'conflict with "pulumi-kubernetes" using scheduling.k8s.io/v1: .value' in said, said
    assert live_classes(cp)["tpu-serving-online"] == (90000, "Never")
    run.destroy()
