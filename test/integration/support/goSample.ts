import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/**
 * The Go sample controller (samples/go-controller, using the bridge module in bridge/) built once per
 * source state into the project cache, and Delve, installed once per version. Both are cache-friendly:
 * a second run with unchanged sources only hashes files.
 */
import { DELVE_MODULE, DELVE_VERSION } from '../../../src/core/bridge/delve.ts';

export { DELVE_VERSION };

let root: string | undefined;
/** The repository root (set it with {@link setRepoRoot} where import.meta is unavailable: the bundled VS Code suite). */
export function repoRoot(): string {
  return (root ??= join(import.meta.dirname, '..', '..', '..'));
}
export function setRepoRoot(r: string): void {
  root = r;
}
/** samples/go-controller of the repository. */
export function sampleDir(): string {
  return join(repoRoot(), 'samples', 'go-controller');
}

export function cacheDir(): string {
  return process.env.RECONCILE_LAB_CACHE ?? join(homedir(), '.cache', 'reconcile-lab');
}

function goFiles(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) goFiles(p, out);
    else if (/\.(go|mod|sum)$/.test(name) && !name.endsWith('_test.go')) out.push(p);
  }
  return out;
}

/** Whether `go` runs here. */
export function haveGo(): boolean {
  return spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
}

/** samples/go-harbor-operator: a second Go controller shaped like a user's kubebuilder project (two controllers, a cluster-scoped CRD). */
export function harborOperatorDir(): string {
  return join(repoRoot(), 'samples', 'go-harbor-operator');
}

/** samples/go-relay-operator: a third Go controller shaped like an operator-sdk user's (namespaced two-version CRD, a cache limited to some namespaces, controller.New, a channel source, its own rate limiter). */
export function relayOperatorDir(): string {
  return join(repoRoot(), 'samples', 'go-relay-operator');
}

/** A Go program's main package, relative to its directory ("." or "./cmd"). */
function mainPackage(dir: string): string {
  return existsSync(join(dir, 'cmd', 'main.go')) ? './cmd' : '.';
}

/**
 * Builds the sample (optimisations off when `debug`, for Delve) into the cache, keyed by a hash of every
 * .go/.mod/.sum file of the sample and the bridge module. Returns the binary's path.
 */
export function buildGoSample(o: { debug?: boolean } = {}): string {
  return buildGoProgram(sampleDir(), o.debug ? 'widget-controller-debug' : 'widget-controller', o);
}

/**
 * Builds the Go program in `dir` (a module using the bridge through a replace) into the cache, keyed by a hash of
 * every .go/.mod/.sum file of the program and the bridge module (a second run with unchanged sources only hashes
 * files; the module cache makes a cold build download nothing new). Returns the binary's path.
 */
export function buildGoProgram(dir: string, name: string, o: { debug?: boolean } = {}): string {
  const h = createHash('sha256');
  for (const f of [...goFiles(join(repoRoot(), 'bridge')), ...goFiles(dir)]) h.update(relative(repoRoot(), f)).update('\0').update(readFileSync(f));
  h.update(o.debug ? 'debug' : 'release');
  const out = join(cacheDir(), 'go-sample', h.digest('hex').slice(0, 16));
  const bin = join(out, name);
  if (existsSync(bin)) return bin;
  mkdirSync(out, { recursive: true });
  const args = ['build', ...(o.debug ? ['-gcflags=all=-N -l'] : []), '-o', bin, mainPackage(dir)];
  const r = spawnSync('go', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`go ${args.join(' ')} failed (in ${dir}):\n${r.stderr}`);
  return bin;
}

/** Installs Delve (`go install …@DELVE_VERSION`, GOBIN in the cache) once; returns the dlv path. */
export function installDelve(): string {
  const bin = join(cacheDir(), 'dlv', DELVE_VERSION);
  const dlv = join(bin, 'dlv');
  if (existsSync(dlv)) return dlv;
  mkdirSync(bin, { recursive: true });
  const r = spawnSync('go', ['install', `${DELVE_MODULE}@${DELVE_VERSION}`], { env: { ...process.env, GOBIN: bin }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`go install delve ${DELVE_VERSION} failed:\n${r.stderr}`);
  return dlv;
}

/**
 * Compiles the program in `dir` as Delve's debug build does (`-gcflags=all=-N -l`, every dependency without
 * optimisations) so that Go's build cache holds it, without blocking the caller (the extension host stays
 * responsive): a debug session started afterwards builds in seconds instead of minutes on a cold machine. The binary
 * itself is thrown away.
 */
export function warmDebugBuild(dir: string): Promise<void> {
  const out = join(tmpdir(), `rl-warm-debug-${process.pid}`);
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['build', '-gcflags=all=-N -l', '-o', out, mainPackage(dir)], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        rmSync(out, { force: true });
      } catch {
        // nothing to remove
      }
      if (code === 0) resolve();
      else reject(new Error(`go build -gcflags=all=-N -l failed (in ${dir}):\n${err}`));
    });
  });
}
