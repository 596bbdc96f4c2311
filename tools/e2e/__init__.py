"""End-to-end harness: a real Kubernetes control plane on loopback (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok) from binaries built from pinned Go modules, GKE's CRDs, kwok Nodes shaped like a stack's
node pools, and real controllers run in place of their pods (``make e2e``)."""
