"""How the nodes reach images outside Google: an existing cluster's Cloud NAT, and the image mirror (the Artifact
Registry remote repositories the stack's Docker Hub and ghcr.io images are pulled through, :mod:`.image_mirror`).
Both are made in the platform phase (:func:`tpu_serving.phases.build_platform`)."""

import pulumi

from ..common.options import child_options
from ..config.mirror import mode, needed_upstreams
from ..config.models import StackConfig
from .cloud_nat import cloud_nat, look_up_existing_nat
from .cluster import CloudNat
from .existing import ExistingCluster
from .image_mirror import ImageMirror, ImageMirrorArgs, MirrorMode


def existing_cluster_nat(cfg: StackConfig, cluster: ExistingCluster, gcp: pulumi.ResourceOptions) -> None:
    """An existing cluster's Cloud NAT: its owner's unless the stack file says otherwise (``cluster.cloudNat``:
    ``create`` makes one for the network, ``existing`` with its router and name looks it up)."""
    c = cfg.cluster
    if "cloud_nat" not in c.model_fields_set:
        return
    if c.cloud_nat == CloudNat.CREATE:
        cloud_nat(
            c.name,
            cluster=c.name,
            project=c.host_project or cfg.project,  # a Cloud Router lives in its network's project
            region=cfg.region,
            network=c.network,
            child=child_options(cluster, gcp),
        )
    elif c.existing_nat_router and c.existing_nat:
        look_up_existing_nat(
            project=c.host_project or cfg.project,
            region=cfg.region,
            router=c.existing_nat_router,
            nat=c.existing_nat,
            parent=cluster,
        )


def image_mirror(
    name: str, cfg: StackConfig, labels: dict[str, str], gcp: pulumi.ResourceOptions
) -> ImageMirror | None:
    """The remote repositories of the upstreams the stack's images come from, in the cluster's region, when the stack
    creates them (``imageMirror.mode`` ``create``, the default with a cluster it creates); else None."""
    upstreams = {u.key for u in needed_upstreams(cfg)}
    if mode(cfg) != MirrorMode.CREATE or not upstreams:
        return None
    return ImageMirror(
        f"{name}-mirror",
        ImageMirrorArgs(
            project=cfg.project,
            location=cfg.region,
            cluster=cfg.cluster.name,
            docker_hub="docker_hub" in upstreams,
            ghcr="ghcr" in upstreams,
            labels=labels,
        ),
        opts=gcp,
    )
