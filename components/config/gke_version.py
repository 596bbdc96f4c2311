"""GKE versions as the stack file gives them (``cluster.minMasterVersion``), compared with the minimums of the
features that need one."""

from __future__ import annotations


def older_than(version: str, need: str) -> bool:
    """Whether every GKE ``version`` names is older than ``need``. A version names as much as it gives: "1.31" is any
    1.31 GKE picks, "1.31.1" any build of 1.31.1, so only the parts it gives are compared."""
    given = len(version.partition("-gke.")[0].split(".")) + (1 if "-gke." in version else 0)
    return gke_version(version)[:given] < gke_version(need)[:given]


def gke_version(version: str) -> tuple[int, ...]:
    """``"1.34.0-gke.1626000"`` -> ``(1, 34, 0, 1626000)``; a minor or patch alone counts its first build."""
    base, _, build = version.partition("-gke.")
    parts = [int(x) for x in base.split(".")] + [0] * (3 - len(base.split(".")))
    return (*parts[:3], int(build) if build.isdigit() else 0)
