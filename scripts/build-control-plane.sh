#!/usr/bin/env bash
# Builds (once per version) the kube-testenv multicall binary: etcd + kube-apiserver +
# kube-controller-manager + kubectl from Go modules. Prints the binary's path on stdout.
#
# The binary and the generated go.mod live under the cache folder, keyed by version, so a
# warm run only checks that the file exists. Nothing built here is committed.
#
#   RECONCILE_LAB_CACHE  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-lab)
#   KUBE_VERSION         Kubernetes version (default below), ETCD_VERSION likewise
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-1.34.2}
ETCD_VERSION=${ETCD_VERSION:-3.6.5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${RECONCILE_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-lab}
# The key includes a hash of main.go, so a change of the component list rebuilds.
src_hash=$( (cat "$here/controlplane/main.go"; echo "$KUBE_VERSION $ETCD_VERSION") | sha256sum | cut -c1-10)
out="$cache/kube-testenv/v$KUBE_VERSION-etcd$ETCD_VERSION-$src_hash"
bin="$out/kube-testenv"

if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

# One build at a time (tests, the lab and CI may ask concurrently): wait for the lock, then look again.
mkdir -p "$out"
exec 9>"$out.lock"
flock 9
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  cat >&2 <<MSG
reconcile-lab: Go is needed to build the local control plane (etcd + kube-apiserver) once.
  Install Go 1.24 or newer (https://go.dev/dl, or your distribution's golang package) and run again,
  or point KUBEBUILDER_ASSETS at a folder holding envtest's etcd and kube-apiserver binaries.
MSG
  exit 3
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOMAXPROCS=${GOMAXPROCS:-2}
work="$out/src"
rm -rf "$work" && mkdir -p "$work"
cp "$here/controlplane/main.go" "$work/main.go"
cd "$work"
log() { echo "[control-plane build] $*" >&2; }
log "building kube-testenv v$KUBE_VERSION (etcd $ETCD_VERSION) in $work; a cold build takes 10-20 minutes"
go mod init reconcile-lab.local/kube-testenv >/dev/null 2>&1
staging="v0.${KUBE_VERSION#1.}"
gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@v$KUBE_VERSION's go.mod"; exit 4; }
# Every staging module is required at v0.0.0 by k8s.io/kubernetes; route each to its published tag.
for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) v0\.0\.0$#\1#p' "$gomod" | sort -u); do
  go mod edit "-replace=$m=$m@$staging"
done
go get "k8s.io/kubernetes@v$KUBE_VERSION" "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
go mod tidy >&2
minor=${KUBE_VERSION#1.}; minor=${minor%%.*}
CGO_ENABLED=0 go build -p 2 -trimpath -o "$bin.tmp" -ldflags "-s -w \
  -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION \
  -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
  -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION" . >&2
mv "$bin.tmp" "$bin"
log "built $bin"
echo "$bin"
