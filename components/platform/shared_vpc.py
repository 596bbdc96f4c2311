"""A cluster in a Shared VPC: the host project's network and subnet, their secondary ranges, and the grants GKE needs.

A service project's cluster uses a subnet of the host project's network, with secondary ranges for its pods and its
Services that the host project's admin made: GKE's Shared VPC guide creates the subnet with them, and the cluster
names them (``--cluster-secondary-range-name``, ``--services-secondary-range-name``), since a service project cannot
create ranges in the host's subnet ("Setting up clusters with Shared VPC",
https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc). The same page grants the service
project's GKE service agent (``service-<number>@container-engine-robot.iam.gserviceaccount.com``) the Host Service
Agent User and Network User roles, and its Google APIs service agent (``<number>@cloudservices.gserviceaccount.com``)
Network User, in the host project ("Enabling and granting roles"; the same three grants as
GoogleCloudPlatform/cloud-foundation-fabric ``modules/project/sharedvpc-agent-iam.yaml``, which cites that section).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_gcp import organizations, projects

from ..common.naming import project_id_problem

HOST_SERVICE_AGENT_USER = "roles/container.hostServiceAgentUser"
NETWORK_USER = "roles/compute.networkUser"
GKE_AGENT = "service-{number}@container-engine-robot.iam.gserviceaccount.com"
API_AGENT = "{number}@cloudservices.gserviceaccount.com"


@dataclass(frozen=True)
class HostGrant:
    """One role the host project grants one of the service project's agents."""

    key: str
    """The grant's part of its resource name."""
    agent: str
    """The agent's e-mail, with ``{number}`` for the service project's number."""
    role: str


HOST_GRANTS: tuple[HostGrant, ...] = (
    HostGrant("gke-host-agent", GKE_AGENT, HOST_SERVICE_AGENT_USER),
    HostGrant("gke-network-user", GKE_AGENT, NETWORK_USER),
    HostGrant("apis-network-user", API_AGENT, NETWORK_USER),
)
"""What the host project grants the service project's agents (the module's sources)."""


def host_project_problem(host_project: str | None) -> str:
    """Why the host project is not a GCP project ID, or ``""`` (unset: no Shared VPC)."""
    return "" if host_project is None else project_id_problem(host_project)


def network_path(host_project: str, network: str) -> str:
    """The host project's network, as the cluster names it."""
    return f"projects/{host_project}/global/networks/{network}"


def network_project(network: str) -> str | None:
    """The project of a network named by its path (``projects/<project>/global/networks/<name>``), else None."""
    parts = network.split("/")
    return parts[1] if len(parts) == 5 and parts[0] == "projects" else None


def subnetwork_path(host_project: str, region: str, subnetwork: str) -> str:
    """The host project's subnet in the cluster's region, as the cluster names it."""
    return f"projects/{host_project}/regions/{region}/subnetworks/{subnetwork}"


def shared_vpc_problems(
    host_project: object, subnetwork: object, pods_range: object, services_range: object, creates_nat: bool = False
) -> list[str]:
    """A host project's network needs its subnet and both secondary ranges named, and its own Cloud NAT; the ranges go
    in pairs."""
    problems = []
    if host_project is not None and creates_nat:
        # The stack's NAT serves ALL_SUBNETWORKS_ALL_IP_RANGES (tpu_serving.platform.cloud_nat): "there should not be any other
        # Router.Nat section in any Router for this network in this region" (Compute API,
        # RouterNat.SourceSubnetworkIpRangesToNat), so in a shared network it would take every tenant's subnets.
        problems.append(
            f"cloud_nat = 'create' beside host_project = {host_project!r}: a NAT the stack made would serve every "
            "subnet of the host's network in the region, other projects' too; name the host network's NAT with "
            "cloud_nat = 'existing', existing_nat_router and existing_nat"
        )
    if host_project is not None and subnetwork is None:
        problems.append(
            f"subnetwork is unset beside host_project = {host_project!r}: name the host project's subnet in the "
            "cluster's region (a service project's cluster uses a subnet the host project shares)"
        )
    if host_project is not None and (pods_range is None or services_range is None):
        problems.append(
            f"pods_secondary_range and services_secondary_range are required beside host_project = {host_project!r}: "
            "name the subnet's secondary ranges for pods and Services, which the host project's admin creates (GKE "
            "'Setting up clusters with Shared VPC', https://cloud.google.com/kubernetes-engine/docs/how-to/"
            "cluster-shared-vpc)"
        )
    elif (pods_range is None) != (services_range is None):
        problems.append("pods_secondary_range and services_secondary_range go together: name both, or neither")
    return problems


def grant_lines(project: str, host_project: str) -> list[str]:
    """The grants the host project's admin makes, one line each, for the preview and the docs."""
    return [f"{host_project}: {g.role} to {g.agent.replace('{number}', f'<number of {project}>')}" for g in HOST_GRANTS]


def host_grants(name: str, project: str, host_project: str, opts: pulumi.ResourceOptions) -> list[projects.IAMMember]:
    """The host project's grants to the service project's agents, one ``IAMMember`` each.

    Kept on destroy: the member is the project's agent, which every cluster of the project shares, and deleting an
    IAMMember removes the member from the role whoever else needs it (terraform-provider-google
    resourceIamMemberDelete -> subtractFromBindings), so one stack's destroy would cut its neighbours off the network.
    """
    number = organizations.get_project_output(project_id=project, opts=pulumi.InvokeOutputOptions(parent=opts.parent))
    kept = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True))
    return [
        projects.IAMMember(
            f"{name}-{g.key}",
            project=host_project,
            role=g.role,
            member=number.number.apply(lambda n, agent=g.agent: "serviceAccount:" + agent.format(number=n)),
            opts=kept,
        )
        for g in HOST_GRANTS
    ]
