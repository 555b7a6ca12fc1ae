// Builds bench/clientgo (client-go, pinned to the control plane's Kubernetes version) for the benchmarks that
// put client-go's numbers next to ours. The module cache the control plane's build filled is enough.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds bench/clientgo once into a temp dir and returns the binary's path; undefined (and the reason passed to
 * `log`) when BENCH_NO_CLIENT_GO is set, Go is missing or the build fails: the client-go column is then left out.
 */
export function buildClientGo(log: (s: string) => void): string | undefined {
  if (process.env.BENCH_NO_CLIENT_GO) return undefined;
  const dir = fileURLToPath(new URL('./clientgo/', import.meta.url));
  const out = join(mkdtempSync(join(tmpdir(), 'bench-clientgo-')), 'clientgo');
  log("building bench/clientgo (client-go at the control plane's Kubernetes version)…");
  const r = spawnSync('go', ['build', '-o', out, '.'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GOFLAGS: process.env.GOFLAGS ?? '-mod=mod' } });
  if (r.status !== 0) {
    log(`client-go left out: go build failed: ${(r.stderr || String(r.error)).trim().split('\n').slice(-3).join(' | ')}`);
    return undefined;
  }
  return out;
}

/** Runs the built binary and returns the JSON of its "RESULT …" line; throws with its stderr on failure. */
export function runClientGoJson<T>(bin: string, args: string[], env: NodeJS.ProcessEnv = {}): T {
  const r = spawnSync(bin, args, { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
  const m = /RESULT (\{.*\})/.exec(r.stdout ?? '');
  if (r.status !== 0 || !m) throw new Error(`clientgo ${args[0]} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(m[1]!) as T;
}
