/**
 * The flags of a check's one-line `reproduce` command. Shared by the CLI and the editor so that a copied line,
 * pasted into a POSIX shell as is, runs the same check with the same reconciler, resource, cluster and inputs
 * (predicates, transitions, bounds): a finding that depends on `--transition` only reproduces with it.
 */

/** `s` quoted for a POSIX shell when it needs it (single quotes; a quote inside becomes '\''). */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What selected the run; each part present becomes its flag. */
export interface ReproduceParts {
  /** The `--reconciler` value ("module:x.ts", "exec:./r.sh a"); omitted for the lab reconciler. */
  reconciler?: string;
  /** The Go program's argv (`--go`); wins over `reconciler`. */
  go?: readonly string[];
  /** "plural.group". */
  resource: string;
  kubeconfig?: string;
  context?: string;
  confirmCluster?: string;
  /** Predicate specs as typed (`generation-changed`). A module's exported ones are read from the module again. */
  predicates?: readonly string[];
  /** The unobserved-state / stale-cache transitions (JSON merge patches), when given on the command line or by a setting. */
  transitions?: readonly unknown[];
  /** `--copy` values (`secret/db-creds`): objects the checks copy besides those the spec refers to. */
  copies?: readonly string[];
  convergenceBoundMs?: number;
  execTimeoutMs?: number;
  /** The reconcile deadline `--reconcile-timeout` (0: none, which overrides a module's own); not for a Go program. */
  reconcileTimeoutMs?: number;
}

/** The flags, in a fixed order, each value quoted for a shell when it needs it. */
export function reproduceFlags(p: ReproduceParts): string {
  const out: string[] = [`--resource ${shellQuote(p.resource)}`];
  if (p.go?.length) out.push(`--go ${shellQuote(p.go.map(shellQuote).join(' '))}`);
  else if (p.reconciler && p.reconciler !== 'lab') out.push(`--reconciler ${shellQuote(p.reconciler)}`);
  if (p.kubeconfig) out.push(`--kubeconfig ${shellQuote(p.kubeconfig)}`);
  if (p.context) out.push(`--context ${shellQuote(p.context)}`);
  if (p.confirmCluster) out.push(`--confirm-cluster ${shellQuote(p.confirmCluster)}`);
  for (const pr of p.predicates ?? []) out.push(`--predicate ${shellQuote(pr)}`);
  for (const t of p.transitions ?? []) out.push(`--transition ${shellQuote(JSON.stringify(t))}`);
  for (const c of p.copies ?? []) out.push(`--copy ${shellQuote(c)}`);
  if (p.convergenceBoundMs !== undefined) out.push(`--convergence-bound ${p.convergenceBoundMs / 1000}`);
  if (p.execTimeoutMs !== undefined) out.push(`--exec-timeout ${p.execTimeoutMs / 1000}`);
  if (p.reconcileTimeoutMs !== undefined && !p.go?.length) out.push(`--reconcile-timeout ${p.reconcileTimeoutMs / 1000}`);
  return out.join(' ');
}
