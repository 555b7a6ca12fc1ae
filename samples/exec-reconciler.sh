#!/usr/bin/env bash
# The lab scenario as an exec reconciler (kubectl + jq). Reconcile Lab runs it once per reconcile:
#   input  : JSON on stdin {key, namespace, name, resource, object, kubeconfig, context, dryRun}
#            and env RECONCILE_KEY RECONCILE_NAMESPACE RECONCILE_NAME RECONCILE_RESOURCE RECONCILE_DRY_RUN
#            KUBECONFIG (RECONCILE_CONTEXT when a context was chosen)
#   output : one JSON object on stdout {requeueAfterMs?, reason?, error?, terminal?, status?, log?}
#   stderr : diagnostics (its tail is shown when the script exits non-zero)
# Usage: reconcile-lab run --reconciler exec:samples/exec-reconciler.sh
set -euo pipefail

FINALIZER="lab.reconcile.dev/cleanup"
input=$(cat)
ns=$RECONCILE_NAMESPACE
name=$RECONCILE_NAME
resource=$RECONCILE_RESOURCE
child="${name}-config"
logs=()

k() { kubectl ${RECONCILE_CONTEXT:+--context "$RECONCILE_CONTEXT"} -n "$ns" "$@"; }
# Writes honour dry-run: the server validates them and stores nothing.
kw() { if [ "$RECONCILE_DRY_RUN" = "true" ]; then k "$@" --dry-run=server -o name >/dev/null; else k "$@" -o name >/dev/null; fi; }
emit() { # emit <jq filter producing the output object> [jq args...]
  local filter=$1; shift
  jq -cn --argjson logs "$(printf '%s\n' "${logs[@]+"${logs[@]}"}" | jq -R . | jq -sc 'map(select(. != ""))')" "$@" "$filter + {log: \$logs}"
}

# 1. Observe the latest state (level-based: only the key matters; re-read instead of trusting the event).
obj=$(k get "$resource" "$name" -o json 2>/dev/null || true)
if [ -z "$obj" ]; then emit '{}'; exit 0; fi
uid=$(jq -r .metadata.uid <<<"$obj")
rv=$(jq -r .metadata.resourceVersion <<<"$obj")
generation=$(jq -r .metadata.generation <<<"$obj")

# 2. Deletion: idempotent cleanup (already gone is success), then remove our finalizer, guarded by test ops.
if [ "$(jq -r '.metadata.deletionTimestamp // ""' <<<"$obj")" != "" ]; then
  idx=$(jq --arg f "$FINALIZER" '(.metadata.finalizers // []) | index($f) // -1' <<<"$obj")
  if [ "$idx" -ge 0 ]; then
    owner=$(k get configmap "$child" -o json 2>/dev/null | jq -r '.metadata.ownerReferences[]? | select(.controller) | .uid' || true)
    if [ "$owner" = "$uid" ]; then kw delete configmap "$child" --ignore-not-found; logs+=("deleted ConfigMap $child"); fi
    patch=$(jq -cn --arg rv "$rv" --arg f "$FINALIZER" --argjson i "$idx" \
      '[{op:"test",path:"/metadata/resourceVersion",value:$rv},{op:"test",path:"/metadata/finalizers/\($i)",value:$f},{op:"remove",path:"/metadata/finalizers/\($i)"}]')
    kw patch "$resource" "$name" --type=json -p "$patch"
    logs+=("removed finalizer $FINALIZER")
  fi
  emit '{}'
  exit 0
fi

# 3. Our finalizer first (resourceVersion in a merge patch is a precondition: 409 if someone wrote meanwhile).
if [ "$(jq --arg f "$FINALIZER" '(.metadata.finalizers // []) | index($f) != null' <<<"$obj")" != "true" ]; then
  patch=$(jq -c --arg f "$FINALIZER" '{metadata:{finalizers:((.metadata.finalizers // []) + [$f]), resourceVersion:.metadata.resourceVersion}}' <<<"$obj")
  kw patch "$resource" "$name" --type=merge -p "$patch"
  logs+=("added finalizer $FINALIZER")
fi

# The Ready condition, keeping lastTransitionTime when the status does not flip.
status_with() { # status_with <True|False> <reason> <message>
  jq -c --arg s "$1" --arg r "$2" --arg m "$3" --argjson g "$generation" --arg child "$child" --arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '
    (.status // {}) as $st
    | (($st.conditions // []) | map(select(.type == "Ready")) | .[0]) as $old
    | {type:"Ready", status:$s, reason:$r, message:$m, observedGeneration:$g,
       lastTransitionTime:(if $old != null and $old.status == $s then $old.lastTransitionTime else $now end)} as $ready
    | $st + {observedGeneration:$g, childName:$child,
             conditions:((($st.conditions // []) | map(select(.type != "Ready"))) + [$ready])}' <<<"$obj"
}

# 4. Dependencies: missing is "not yet" (a delayed requeue with a reason), never an error.
missing=()
while IFS=$'\t' read -r kind dep; do
  [ -z "$kind" ] && continue
  k get "$(tr '[:upper:]' '[:lower:]' <<<"$kind")" "$dep" -o name >/dev/null 2>&1 || missing+=("$kind $ns/$dep")
done < <(jq -r '.spec.dependsOn[]? | [.kind, .name] | @tsv' <<<"$obj")
if [ "${#missing[@]}" -gt 0 ]; then
  msg="waiting for ${missing[*]}"
  emit '{requeueAfterMs: 15000, reason: ("DependencyMissing: " + $msg), status: $status}' --arg msg "$msg" --argjson status "$(status_with False DependencyMissing "$msg")"
  exit 0
fi

# 5. Desired child versus observed child: create when missing, replace only when different, else write nothing.
desired=$(jq -c --arg child "$child" '{apiVersion:"v1", kind:"ConfigMap",
  metadata:{name:$child, namespace:.metadata.namespace,
    labels:{"app.kubernetes.io/managed-by":"reconcile-lab", "lab.reconcile.dev/widget":.metadata.name},
    ownerReferences:[{apiVersion:.apiVersion, kind:.kind, name:.metadata.name, uid:.metadata.uid, controller:true, blockOwnerDeletion:true}]},
  data:(.spec.data // {})}' <<<"$obj")
current=$(k get configmap "$child" -o json 2>/dev/null || true)
if [ -z "$current" ]; then
  kw create -f - <<<"$desired"
  logs+=("created ConfigMap $child")
else
  same=$(jq -n --argjson a "$current" --argjson d "$desired" '
    (($a.data // {}) == $d.data)
    and (($a.metadata.labels // {}) | with_entries(select(.key == "app.kubernetes.io/managed-by" or .key == "lab.reconcile.dev/widget"))) == $d.metadata.labels
    and ([$a.metadata.ownerReferences[]? | select(.controller) | .uid] == [$d.metadata.ownerReferences[0].uid])')
  if [ "$same" != "true" ]; then
    merged=$(jq -c --argjson d "$desired" '.data = $d.data | .metadata.labels = ((.metadata.labels // {}) + $d.metadata.labels) | .metadata.ownerReferences = $d.metadata.ownerReferences | del(.metadata.managedFields)' <<<"$current")
    kw replace -f - <<<"$merged"
    logs+=("updated ConfigMap $child")
  fi
fi

# 6. Report: the status to write (Reconcile Lab writes it through /status only if it changed).
emit '{status: $status}' --argjson status "$(status_with True Reconciled "ConfigMap $child matches spec.data")"
