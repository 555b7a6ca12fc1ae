#!/usr/bin/env bash
# Builds (once per version) the kube-testenv multicall binary of controlplane/ (a Go module in this repo:
# etcd + kube-apiserver + kube-controller-manager + kubectl, pinned in controlplane/go.mod and go.sum with the
# Kubernetes staging `replace` list). Prints the binary's path on stdout.
#
# The binary lives under the cache folder, keyed by the Kubernetes version and a hash of the module's files, so
# a warm run only checks that the file exists. Nothing built here is committed. To move to another Kubernetes or
# etcd version, run scripts/update-control-plane-deps.sh.
#
#   RECONCILE_LAB_CACHE  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-lab)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$here/controlplane"
cache=${RECONCILE_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-lab}
kube_version=$(sed -n 's#^[[:space:]]*k8s.io/kubernetes v\([0-9.]*\).*#\1#p' "$mod/go.mod" | head -1)
[ -n "$kube_version" ] || { echo "reconcile-lab: cannot read the Kubernetes version from $mod/go.mod" >&2; exit 4; }
src_hash=$(cat "$mod/main.go" "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-10)
out="$cache/kube-testenv/v$kube_version-$src_hash"
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

log() { echo "[control-plane build] $*" >&2; }
log "building kube-testenv for Kubernetes v$kube_version from $mod; a cold build takes 4-15 minutes"
export GOTOOLCHAIN=local GOMAXPROCS=${GOMAXPROCS:-2}
minor=${kube_version#1.}; minor=${minor%%.*}
cd "$mod"
CGO_ENABLED=0 go build -mod=readonly -p 2 -trimpath -o "$bin.tmp" -ldflags "-s -w \
  -X k8s.io/component-base/version.gitVersion=v$kube_version \
  -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
  -X k8s.io/client-go/pkg/version.gitVersion=v$kube_version" . >&2
mv "$bin.tmp" "$bin"
log "built $bin"
echo "$bin"
