#!/usr/bin/env bash
# Maintainers only: re-pins controlplane/go.mod and go.sum to another Kubernetes / etcd version.
#   scripts/update-control-plane-deps.sh 1.34.2 3.6.5
# k8s.io/kubernetes requires every staging module (k8s.io/api, k8s.io/apiserver, …) at v0.0.0 and resolves them
# with replace directives that a dependent module ignores, so each staging module is replaced here with its
# published tag v0.<minor>.<patch>; the list is read from the kubernetes go.mod itself, not hard-coded.
set -euo pipefail
KUBE_VERSION=${1:?usage: update-control-plane-deps.sh <kubernetes version, e.g. 1.34.2> <etcd version, e.g. 3.6.5>}
ETCD_VERSION=${2:?etcd version, e.g. 3.6.5}
mod=$(cd "$(dirname "${BASH_SOURCE[0]}")/../controlplane" && pwd)
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
cd "$mod"
gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -f "$gomod" ] || { echo "could not download k8s.io/kubernetes@v$KUBE_VERSION's go.mod" >&2; exit 1; }
for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) v0\.0\.0$#\1#p' "$gomod" | sort -u); do
  go mod edit "-replace=$m=$m@v0.${KUBE_VERSION#1.}"
done
go get "k8s.io/kubernetes@v$KUBE_VERSION" "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
go mod tidy
echo "controlplane/go.mod now pins Kubernetes v$KUBE_VERSION and etcd $ETCD_VERSION; commit go.mod and go.sum."
