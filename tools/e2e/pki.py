"""The control plane's certificates and keys, made with the ``openssl`` command line (no Python dependency).

One CA signs everything: the API server's serving certificate (loopback and the in-cluster names of the
``kubernetes`` Service), the client certificates of the admin (``system:masters``), the controller-manager and the
scheduler (the users their default RBAC bindings name: ``system:kube-controller-manager``,
``system:kube-scheduler``), the aggregator's front-proxy client (the metrics adapter's caller), and the controller-manager signs certificate requests with it. The service-account
tokens are signed with a key pair of their own. Keys are ECDSA P-256 (quick to make; Go's TLS and the
service-account token signer take them).
"""

from __future__ import annotations

import ipaddress
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"
"""Validity of every certificate: a run lasts minutes."""

CURVE = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")


class PkiError(RuntimeError):
    """openssl failed; the message holds its output."""


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    """Every file the control plane's components are started with."""

    ca: KeyPair
    apiserver: KeyPair
    admin: KeyPair
    controller_manager: KeyPair
    scheduler: KeyPair
    front_proxy_client: KeyPair
    """The aggregator's client certificate to an aggregated API server (``--proxy-client-cert-file``): the user
    ``front-proxy-client``, which ``--requestheader-allowed-names`` admits."""
    service_account_key: Path
    service_account_pub: Path


def _openssl(args: Sequence[str], cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise PkiError(f"openssl {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")


def _san(names: Sequence[str]) -> str:
    parts = []
    for name in names:
        try:
            ipaddress.ip_address(name)
            parts.append(f"IP:{name}")
        except ValueError:
            parts.append(f"DNS:{name}")
    return ",".join(parts)


def make_ca(directory: Path, name: str = "tpu-serving-e2e-ca") -> KeyPair:
    """A self-signed CA in ``directory`` (``ca.crt``, ``ca.key``)."""
    pair = KeyPair(directory / "ca.crt", directory / "ca.key")
    _openssl(
        [
            "req", "-x509", "-new", *CURVE, "-nodes", "-days", DAYS, "-subj", f"/CN={name}",
            "-keyout", str(pair.key), "-out", str(pair.cert),
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ],
        directory,
    )  # fmt: skip
    return pair


def issue(
    ca: KeyPair,
    directory: Path,
    stem: str,
    *,
    common_name: str,
    organization: str = "",
    sans: Sequence[str] = (),
    server: bool = False,
) -> KeyPair:
    """A certificate signed by ``ca``: a client certificate (``common_name`` the user, ``organization`` its group)
    or, with ``server``, a serving certificate for ``sans``."""
    pair = KeyPair(directory / f"{stem}.crt", directory / f"{stem}.key")
    csr, ext = directory / f"{stem}.csr", directory / f"{stem}.ext"
    subject = (f"/O={organization}" if organization else "") + f"/CN={common_name}"
    usage = "serverAuth" if server else "clientAuth"
    lines = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", f"extendedKeyUsage={usage}"]
    if sans:
        lines.append(f"subjectAltName={_san(sans)}")
    ext.write_text("\n".join(lines) + "\n")
    _openssl(["req", "-new", *CURVE, "-nodes", "-subj", subject, "-keyout", str(pair.key), "-out", str(csr)], directory)
    _openssl(
        [
            "x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key), "-CAcreateserial",
            "-days", DAYS, "-extfile", str(ext), "-out", str(pair.cert),
        ],
        directory,
    )  # fmt: skip
    csr.unlink()
    ext.unlink()
    return pair


def service_account_keys(directory: Path) -> tuple[Path, Path]:
    """The service-account token signing key and its public half (``sa.key``, ``sa.pub``)."""
    key, pub = directory / "sa.key", directory / "sa.pub"
    _openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key)], directory)
    _openssl(["ec", "-in", str(key), "-pubout", "-out", str(pub)], directory)
    return key, pub


APISERVER_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


def make_pki(directory: Path, *, apiserver_ips: Sequence[str]) -> Pki:
    """Every certificate and key of the control plane, written under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = make_ca(directory)
    sa_key, sa_pub = service_account_keys(directory)
    return Pki(
        ca=ca,
        apiserver=issue(
            ca,
            directory,
            "apiserver",
            common_name="kube-apiserver",
            sans=(*apiserver_ips, *APISERVER_NAMES),
            server=True,
        ),  # fmt: skip
        admin=issue(ca, directory, "admin", common_name="e2e-admin", organization="system:masters"),
        controller_manager=issue(ca, directory, "controller-manager", common_name="system:kube-controller-manager"),
        scheduler=issue(ca, directory, "scheduler", common_name="system:kube-scheduler"),
        front_proxy_client=issue(ca, directory, "front-proxy-client", common_name="front-proxy-client"),
        service_account_key=sa_key,
        service_account_pub=sa_pub,
    )
