"""What a pod's container sees, made for a local process: its volumes' files, its environment, its service account.

The kubelet's part for one container of a kwok pod, as far as a controller needs it:

- ConfigMap and Secret volumes are written under the pod's directory; a volume mounted whole is kept in sync
  (the kubelet updates those; a ``subPath`` mount is written once, as the kubelet never updates one);
- a mount under ``/tmp`` lands in the pod's private ``/tmp`` (the process runs in its own mount namespace, see
  :mod:`.controllers`); a mount elsewhere lands in ``mounts/<path>`` and the container's arguments naming that
  path are rewritten to it;
- the service account's token (a TokenRequest bound to the pod), the cluster CA and the namespace, as the
  projected ``kube-api-access`` volume holds them at ``/var/run/secrets/kubernetes.io/serviceaccount``;
- the environment: ``value``, the downward API (``fieldRef``) and ConfigMap/Secret keys.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .kube import Kube, Obj

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_SECONDS = 6 * 3600


def field_ref(pod: Mapping[str, Any], path: str) -> str:
    """The downward API's value of ``path`` (``metadata.namespace``, ``status.podIP``, ...) for ``pod``."""
    node: Any = pod
    for part in path.split("."):
        node = node.get(part, "") if isinstance(node, Mapping) else ""
    return str(node)


def _key_ref(kube: Kube, namespace: str, kind: str, ref: Mapping[str, Any]) -> str:
    obj = kube.find("v1", kind, str(ref["name"]), namespace) or {}
    data = _data(obj)
    return data.get(str(ref["key"]), b"").decode()


def environment(kube: Kube, pod: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, str]:
    """The container's ``env``, resolved."""
    namespace = str(pod["metadata"]["namespace"])
    env: dict[str, str] = {}
    for var in container.get("env") or ():
        source = var.get("valueFrom") or {}
        if "fieldRef" in source:
            env[var["name"]] = field_ref(pod, source["fieldRef"]["fieldPath"])
        elif "secretKeyRef" in source:
            env[var["name"]] = _key_ref(kube, namespace, "Secret", source["secretKeyRef"])
        elif "configMapKeyRef" in source:
            env[var["name"]] = _key_ref(kube, namespace, "ConfigMap", source["configMapKeyRef"])
        else:
            env[var["name"]] = str(var.get("value", ""))
    return env


def _data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    """A ConfigMap's or Secret's keys and their bytes."""
    if obj.get("kind") == "Secret":
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    data = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return data


def _write(path: Path, content: bytes) -> bool:
    """Write ``content`` to ``path`` when it differs (atomically); whether it changed."""
    if path.is_file() and path.read_bytes() == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(content)
    tmp.replace(path)
    return True


@dataclass(frozen=True)
class Mount:
    """One ConfigMap or Secret volume mount: where its files go on this machine."""

    kind: str
    name: str
    namespace: str
    host_path: Path
    sub_path: str = ""
    items: Mapping[str, str] = field(default_factory=dict)
    optional: bool = False

    def project(self, kube: Kube) -> None:
        obj = kube.find("v1", self.kind, self.name, self.namespace)
        if obj is None:
            if self.optional:
                return
            raise FileNotFoundError(f"{self.kind} {self.namespace}/{self.name} (a volume of the pod) does not exist")
        data = _data(obj)
        if self.sub_path:
            _write(self.host_path, data.get(self.sub_path, b""))
            return
        self.host_path.mkdir(parents=True, exist_ok=True)
        for key, content in data.items():
            if not self.items or key in self.items:
                _write(self.host_path / self.items.get(key, key), content)


def _volume_source(volume: Mapping[str, Any]) -> tuple[str, str, Mapping[str, str], bool] | None:
    """(kind, object name, items, optional) of a ConfigMap or Secret volume; None for another kind."""
    for kind, key, name_key in (("ConfigMap", "configMap", "name"), ("Secret", "secret", "secretName")):
        if key in volume:
            src = volume[key]
            items = {i["key"]: i["path"] for i in src.get("items") or ()}
            return kind, str(src[name_key]), items, bool(src.get("optional"))
    return None


@dataclass
class PodFiles:
    """The files of one container of ``pod`` under ``root``: ``root/tmp`` is its ``/tmp``, ``root/serviceaccount``
    its service account volume, ``root/mounts`` its other mounts."""

    kube: Kube
    pod: Obj
    container: Obj
    root: Path
    ca_file: Path
    mounts: list[Mount] = field(default_factory=list)
    rewrites: dict[str, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def service_account(self) -> Path:
        return self.root / "serviceaccount"

    def host_path(self, mount_path: str) -> Path:
        if mount_path == "/tmp" or mount_path.startswith("/tmp/"):
            return self.tmp / mount_path.removeprefix("/tmp").lstrip("/")
        return self.root / "mounts" / mount_path.lstrip("/")

    def prepare(self) -> PodFiles:
        """Write every ConfigMap and Secret volume, the service account files; note the path rewrites."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        volumes = {v["name"]: v for v in self.pod["spec"].get("volumes") or ()}
        namespace = str(self.pod["metadata"]["namespace"])
        for vm in self.container.get("volumeMounts") or ():
            source = _volume_source(volumes.get(vm["name"], {}))
            host = self.host_path(str(vm["mountPath"]))
            if source is None:
                if "emptyDir" in volumes.get(vm["name"], {}):
                    host.mkdir(parents=True, exist_ok=True)
                continue
            kind, name, items, optional = source
            mount = Mount(kind, name, namespace, host, str(vm.get("subPath", "")), items, optional)
            mount.project(self.kube)
            self.mounts.append(mount)
            if not str(vm["mountPath"]).startswith("/tmp"):
                self.rewrites[str(vm["mountPath"])] = str(host)
        self.token()
        return self

    def token(self) -> str:
        """A token of the pod's service account, bound to the pod, written with ``ca.crt`` and ``namespace``."""
        meta, spec = self.pod["metadata"], self.pod["spec"]
        account = spec.get("serviceAccountName") or "default"
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "expirationSeconds": TOKEN_SECONDS,
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]},
            },
        }
        path = f"/api/v1/namespaces/{meta['namespace']}/serviceaccounts/{account}/token"
        token = str(self.kube.request("POST", path, request)["status"]["token"])
        _write(self.service_account / "token", token.encode())
        _write(self.service_account / "ca.crt", self.ca_file.read_bytes())
        _write(self.service_account / "namespace", str(meta["namespace"]).encode())
        return token

    def rewrite(self, arg: str, seen_as: Callable[[str], str] = str) -> str:
        """``arg`` with every mount path outside ``/tmp`` replaced by where its files are (``seen_as``: how the
        process sees a host path)."""
        for mount_path, host in self.rewrites.items():
            arg = arg.replace(mount_path, seen_as(host))
        return arg

    def host_path_of(self, path: str) -> Path:
        """Where the container's file ``path`` is on this machine."""
        for mount_path, host in self.rewrites.items():
            if path == mount_path or path.startswith(mount_path + "/"):
                return Path(host + path.removeprefix(mount_path))
        return self.host_path(path)

    def keep_in_sync(self, interval: float = 1.0) -> None:
        """Re-project the volumes mounted whole every ``interval`` seconds until :meth:`stop`."""
        whole = [m for m in self.mounts if not m.sub_path]
        if whole:
            threading.Thread(target=self._sync, args=(whole, interval), daemon=True).start()

    def _sync(self, mounts: list[Mount], interval: float) -> None:
        while not self._stop.wait(interval):
            for mount in mounts:
                try:
                    mount.project(self.kube)
                except (OSError, RuntimeError):
                    continue

    def stop(self) -> None:
        self._stop.set()
