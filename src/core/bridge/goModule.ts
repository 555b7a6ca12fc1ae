import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { walkDirs } from '../dirWalk.ts';
import { forbiddenHint } from '../k8s/forbidden.ts';
import { readModuleCode, type ModuleCode } from './controllersInCode.ts';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** The module path of the Go bridge package (bridge/go.mod of this repository, shipped inside the extension). */
export const BRIDGE_MODULE_PATH = 'github.com/reconcile-lab/reconcile-lab/bridge';

/** What a go.mod says about the bridge module. */
export interface BridgeInGoMod {
  /** The module's own path (`module` line), when present. */
  readonly module?: string;
  /** A `require` of the bridge module (single line or in a block). */
  readonly requires: boolean;
  /** The target of a `replace` of the bridge module, as written (a directory, or a module path and version). */
  readonly replace?: string;
  /** The replace target resolved against the go.mod's directory, when it is a local directory (starts with ./, ../ or /). */
  readonly replaceDir?: string;
}

/** The go.mod governing `dir`: dir's own, else the nearest parent directory's; undefined when none. */
export function findGoMod(dir: string): string | undefined {
  return findUp(dir, 'go.mod');
}

/** The go.work governing `dir`, when the directory is in a Go workspace (then go.mod alone does not decide). */
export function findGoWork(dir: string): string | undefined {
  return findUp(dir, 'go.work');
}

function findUp(dir: string, name: string): string | undefined {
  for (let d = resolve(dir); ; ) {
    const f = join(d, name);
    if (existsSync(f)) return f;
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** What a go.mod declares (the `go` command's syntax: `//` comments, single-line directives and parenthesized blocks). */
interface GoModDirectives {
  readonly module?: string;
  /** The version of every `require` (direct or `// indirect`), by module path. */
  readonly requires: ReadonlyMap<string, string>;
  /** Each `replace`'s right-hand side (with its version, if any) by the replaced module path; the last one wins. */
  readonly replaces: ReadonlyMap<string, string>;
}

function parseGoMod(text: string): GoModDirectives {
  let module: string | undefined;
  const requires = new Map<string, string>();
  const replaces = new Map<string, string>();
  let block: string | undefined;
  const directive = (verb: string, rest: string) => {
    if (verb === 'module') module = unquote(rest.trim());
    else if (verb === 'require') requires.set(firstWord(rest), unquote(rest.trim().split(/\s+/)[1] ?? ''));
    else if (verb === 'replace') {
      const r = replaceOf(rest);
      if (r) replaces.set(r[0], r[1]);
    }
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    if (block) {
      if (line === ')') block = undefined;
      else directive(block, line);
      continue;
    }
    const m = /^(module|require|replace)\s*(.*)$/.exec(line);
    if (!m) continue;
    const [, verb, rest] = m as unknown as [string, string, string];
    if (rest === '(') block = verb;
    else directive(verb, rest);
  }
  return { ...(module !== undefined ? { module } : {}), requires, replaces };
}

/**
 * Reads what a go.mod's text says about the bridge. Only reads: edits go through `go mod edit` ({@link bridgeEditArgs}).
 */
export function readBridgeInGoMod(goModPath: string, text: string): BridgeInGoMod {
  const { module, requires, replaces } = parseGoMod(text);
  const replace = replaces.get(BRIDGE_MODULE_PATH);
  const local = replace !== undefined && (replace.startsWith('./') || replace.startsWith('../') || isAbsolute(replace) || replace === '.' || replace === '..');
  return {
    ...(module !== undefined ? { module } : {}),
    requires: requires.has(BRIDGE_MODULE_PATH),
    ...(replace !== undefined ? { replace } : {}),
    ...(local ? { replaceDir: resolve(dirname(goModPath), replace!) } : {}),
  };
}

/** The module path declared by the go.mod in `dir` (undefined when there is none or it cannot be read). */
export function moduleOf(dir: string): string | undefined {
  try {
    return parseGoMod(readFileSync(join(dir, 'go.mod'), 'utf8')).module;
  } catch {
    return undefined;
  }
}

/**
 * What the person should know before `go mod tidy` when the module in `goModText` requires another minor release of
 * controller-runtime than the bridge (`bridgeGoModText`, the bridge's own go.mod): requiring the bridge raises an
 * older one to the bridge's (and k8s.io/* with it), and a newer one is not what the bridge is built and tested
 * with. Undefined when the minor releases match or either version is unknown.
 */
export function controllerRuntimeNote(goModText: string, bridgeGoModText: string): string | undefined {
  const mine = parseGoMod(goModText).requires.get(CONTROLLER_RUNTIME_MODULE_PATH);
  const bridge = parseGoMod(bridgeGoModText).requires.get(CONTROLLER_RUNTIME_MODULE_PATH);
  const a = mine ? minorOf(mine) : undefined;
  const b = bridge ? minorOf(bridge) : undefined;
  if (!a || !b || (a[0] === b[0] && a[1] === b[1])) return undefined;
  const older = a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  const myGo = goDirectiveOf(goModText);
  const bridgeGo = goDirectiveOf(bridgeGoModText);
  const goRaised = myGo && bridgeGo && compareGoVersions(myGo, bridgeGo) < 0 ? `, and its go directive from ${myGo} to ${bridgeGo}, which needs Go ${bridgeGo} or newer` : '';
  return older
    ? `Your module requires controller-runtime ${mine}; the bridge is built with ${bridge}, so \`go mod tidy\` raises it to ${bridge} (and k8s.io/* with it${goRaised}): Go keeps the highest version any module requires, so the bridge cannot be used with ${mine}. Read controller-runtime's release notes for what your code may need to change.`
    : `Your module requires controller-runtime ${mine}; the bridge is built and tested with ${bridge} (v${b[0]}.${b[1]}.x): a newer release may work, but it is not what the bridge was tested with.`;
}

/**
 * A hint for a `go run` that failed before the program started because its go.mod is not tidy — what Go prints
 * when the bridge's `require`/`replace` lines were added (or its import written) but `go mod tidy` was not run yet:
 * `missing go.sum entry`, `updates to go.mod needed`, `no required module provides package`. Undefined for any
 * other output. `dir` is the module's directory when known.
 */
export function goModTidyHint(output: readonly string[], dir?: string): string | undefined {
  if (!output.some((l) => /missing go\.sum entry|updates to go\.mod needed|no required module provides package|go: inconsistent vendoring/.test(l))) return undefined;
  return `The module's go.mod is not tidy: run \`go mod tidy\` in ${dir ?? 'the module\'s directory'} (after adding the bridge's require and replace lines and its import; it raises an older controller-runtime to the bridge's), then run again.`;
}

/** Where `go build` / `go vet` put the first error of a program that did not compile, and what `go run` hid. */
export interface GoExitDetails {
  /** The first `file.go:line:col:` error of the output, its file resolved against `dir` (only when inside it). */
  readonly location?: { readonly file: string; readonly line: number; readonly column: number };
  /** `go run` ends a program that exited with code N by printing `exit status N` and exiting with 1 itself: N. */
  readonly programExitCode?: number;
  /** The webhook serving certificate the program did not find ({@link missingWebhookCert}). */
  readonly webhookCert?: string;
  /** With `webhookCert`: whether the module governing `dir` reads ENABLE_WEBHOOKS ({@link ModuleCode.readsEnableWebhooks}). */
  readonly readsEnableWebhooks?: boolean;
}

/**
 * What a failed `go run`'s last output lines say beyond its own exit code: the first compile error's place (a file
 * under `dir`: never a path outside the module, which the editor would then open) and the program's own exit code.
 */
export function goExitDetails(output: readonly string[], dir: string): GoExitDetails {
  let location: GoExitDetails['location'];
  for (const l of output) {
    const m = /^\s*((?:\.{1,2}\/)?[^\s:]+\.go):(\d+):(\d+): /.exec(l);
    if (!m) continue;
    const file = resolve(dir, m[1]!);
    const rel = relative(dir, file);
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    location = { file, line: Number(m[2]), column: Number(m[3]) };
    break;
  }
  const last = [...output].reverse().find((l) => l.trim() !== '');
  const code = last !== undefined ? /^exit status (\d+)$/.exec(last.trim())?.[1] : undefined;
  const webhookCert = missingWebhookCert(output);
  const goMod = webhookCert !== undefined ? findGoMod(dir) : undefined;
  const webhooks = webhookCert !== undefined ? { webhookCert, readsEnableWebhooks: goMod !== undefined && readModuleCode(dirname(goMod)).readsEnableWebhooks } : {};
  return { ...(location ? { location } : {}), ...(code !== undefined ? { programExitCode: Number(code) } : {}), ...webhooks };
}

/** A compile error of a failed `go run` / `go build`, at a file inside the module. */
export interface GoCompileError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/**
 * Every `file.go:line:col: message` error of a failed build's output (the lines the compiler prints under
 * `# package`), its file resolved against `dir` and kept only inside it (as {@link goExitDetails}' location), in
 * output order, at most `limit`. A panic trace (`\t/abs/file.go:20 +0x1d`) has no column and is not one.
 */
export function goCompileErrors(output: readonly string[], dir: string, limit = 50): GoCompileError[] {
  const errors: GoCompileError[] = [];
  for (const l of output) {
    const m = /^\s*((?:\.{1,2}\/)?[^\s:]+\.go):(\d+):(\d+): (.*)$/.exec(l);
    if (!m) continue;
    const file = resolve(dir, m[1]!);
    const rel = relative(dir, file);
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    errors.push({ file, line: Number(m[2]), column: Number(m[3]), message: m[4]!.trim() });
    if (errors.length >= limit) break;
  }
  return errors;
}

/** The `go` directive of a go.mod's text ("1.26.0"), undefined when it has none. */
function goDirectiveOf(text: string): string | undefined {
  return /^go\s+(\d+(?:\.\d+)*)\s*(?:\/\/.*)?$/m.exec(text)?.[1];
}

/** Orders two Go versions ("1.24", "1.26.0") numerically. */
function compareGoVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

function minorOf(version: string): [number, number] | undefined {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** The module path of controller-runtime: a go.mod requiring it is a controller's module. */
export const CONTROLLER_RUNTIME_MODULE_PATH = 'sigs.k8s.io/controller-runtime';

/** Directory names a search for modules never enters (besides names starting with `.` or `_`, which Go ignores too). */
const SKIPPED_DIRS = new Set(['node_modules', 'vendor', 'testdata']);

/**
 * The controller modules in and below `roots`: directories holding a go.mod that requires controller-runtime (or is
 * controller-runtime's consumer through the bridge; not the bridge module itself), nearest first, then by path. For a workspace whose folder is not
 * itself a Go module (a repository with the operator in `operator/`, several operators side by side). Looks at most
 * `maxDepth` directories deep and at `maxDirs` directories in all, never into `.git`, `vendor`, `node_modules`,
 * `testdata` or a directory starting with `.` or `_`; a directory it cannot read is skipped. Synchronous: bounded work.
 */
export function findControllerModules(roots: readonly string[], opts: { maxDepth?: number; maxDirs?: number } = {}): string[] {
  const found: { dir: string; depth: number }[] = [];
  walkDirs(roots, { maxDepth: opts.maxDepth ?? 4, maxDirs: opts.maxDirs ?? 5000, skip: SKIPPED_DIRS }, (dir, entries, depth) => {
    if (!entries.some((e) => e.isFile() && e.name === 'go.mod')) return;
    try {
      const m = parseGoMod(readFileSync(join(dir, 'go.mod'), 'utf8'));
      // The bridge module itself (a checkout of Reconcile Lab below the folder) requires controller-runtime but is no controller.
      if (m.module !== BRIDGE_MODULE_PATH && (m.requires.has(CONTROLLER_RUNTIME_MODULE_PATH) || m.requires.has(BRIDGE_MODULE_PATH))) found.push({ dir, depth });
    } catch {
      // unreadable: not a candidate
    }
  });
  return found.sort((a, b) => a.depth - b.depth || (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0)).map((f) => f.dir);
}

/**
 * The controller modules the Go commands (Run Controller…, Set Up Go Bridge…, the checks) choose among when no
 * directory is configured: empty when the first of `folders` is itself (inside) a Go module — the folder is the
 * default then —, else {@link findControllerModules} of all of them. A `go.work` at or above the folder does not make
 * it a module: `go run .` there finds no Go files (a repository with `go.work` at its root and the operator in
 * `operator/`), so the modules below it are offered as for a folder without one.
 */
export function controllerModuleChoices(folders: readonly string[]): string[] {
  if (folders.length === 0 || findGoMod(folders[0]!)) return [];
  return findControllerModules(folders);
}

function firstWord(s: string): string {
  return unquote(s.trim().split(/\s+/)[0] ?? '');
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') && s.length >= 2 ? s.slice(1, -1) : s;
}

/** "old [v] => new [v]": [old, new (with its version, if any)]. */
function replaceOf(s: string): [string, string] | undefined {
  const [left, right] = s.split('=>');
  if (right === undefined) return undefined;
  const parts = right.trim().split(/\s+/).map(unquote);
  return [firstWord(left ?? ''), parts.join(' ')];
}

/**
 * Why the program of go.mod `goModPath` (text `text`) cannot connect to Reconcile Lab, or undefined when its go.mod
 * requires the bridge and any local replace of it points at a bridge module that exists.
 */
export function bridgeProblem(goModPath: string, text: string): string | undefined {
  const b = readBridgeInGoMod(goModPath, text);
  if (b.module === BRIDGE_MODULE_PATH) return undefined; // the bridge module itself (its own tests)
  if (!b.requires) return `${goModPath} does not require ${BRIDGE_MODULE_PATH}: the program never connects to Reconcile Lab`;
  if (b.replaceDir !== undefined && !existsSync(join(b.replaceDir, 'go.mod'))) {
    return `${goModPath} replaces ${BRIDGE_MODULE_PATH} with ${b.replace}, which holds no go.mod (the directory moved, e.g. after the extension was updated)`;
  }
  return undefined;
}

/**
 * `bridgeProblem` of the go.mod governing `dir`; undefined when there is none, or a go.work decides instead.
 * `replaceMoved`: the go.mod requires the bridge and the code may well use it; only its replace target is gone.
 */
export function bridgeProblemIn(dir: string): { goMod: string; problem: string; replaceMoved: boolean } | undefined {
  if (findGoWork(dir)) return undefined;
  const goMod = findGoMod(dir);
  if (!goMod) return undefined;
  let text: string;
  try {
    text = readFileSync(goMod, 'utf8');
  } catch {
    return undefined;
  }
  const problem = bridgeProblem(goMod, text);
  return problem ? { goMod, problem, replaceMoved: readBridgeInGoMod(goMod, text).requires } : undefined;
}

/** The `go mod edit` arguments that make a go.mod require the bridge and replace it with the directory `bridgeDir`. */
export function bridgeEditArgs(bridgeDir: string): string[] {
  return ['mod', 'edit', `-require=${BRIDGE_MODULE_PATH}@v0.0.0`, `-replace=${BRIDGE_MODULE_PATH}=${bridgeDir}`];
}

/**
 * Makes the go.mod in `moduleDir` require the bridge and replace it with `bridgeDir` (`go mod edit`: no network, no
 * code of the module runs). Rejects with go's own message when it fails.
 */
export function addBridgeToGoMod(moduleDir: string, bridgeDir: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    execFile('go', bridgeEditArgs(bridgeDir), { cwd: moduleDir, timeout: 60_000, ...(signal ? { signal } : {}) }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`go ${bridgeEditArgs(bridgeDir).join(' ')} failed: ${String(stderr).trim() || err.message}`));
      else resolvePromise();
    });
  });
}

/** How many controller modules {@link goLaunchProblem} names before "and N more". */
const MAX_MODULES_NAMED = 5;

/**
 * What is wrong with launching `command args…` in `cwd` before anything is built, for a `go` command (`go run ./cmd`,
 * `go -C dir run …`); undefined when nothing is known to be wrong, and for any other program (a built binary).
 * - No go.mod governs the directory and no go.work either (the operator lives in a subdirectory of a monorepo,
 *   `operator/` beside `web/`): names the controller module(s) found below it and says to run from there — Go itself
 *   only says `cannot find main module`.
 * - The module does not require the bridge, or replaces it with a directory that holds none ({@link bridgeProblem}):
 *   the program would compile for a minute and never connect. A replace whose directory moved is told to point the
 *   replace again (the code already has the bridge's calls), not to add the bridge.
 */
export function goLaunchProblem(command: string, args: readonly string[], cwd: string): string | undefined {
  const base = command.split(/[\\/]/).pop();
  if (base !== 'go' && base !== 'go.exe') return undefined;
  const c = /^--?C(?:=(.+))?$/.exec(args[0] ?? '');
  const chdir = c ? (c[1] ?? args[1]) : undefined;
  const dir = chdir ? resolve(cwd, chdir) : cwd;
  if (!findGoMod(dir) && !findGoWork(dir)) {
    const modules = findControllerModules([dir]);
    if (!modules.length) return undefined;
    const rel = modules.map((m) => relative(dir, m) || '.');
    // Nearest first; a folder holding many checkouts would otherwise print them all on one line.
    const shown = rel.length > MAX_MODULES_NAMED ? `${rel.slice(0, MAX_MODULES_NAMED).join(', ')} and ${rel.length - MAX_MODULES_NAMED} more` : rel.join(', ');
    return `${dir} is in no Go module (no go.mod here or above it), so go cannot build the program; the controller module ${rel.length === 1 ? `is in ${rel[0]}` : `is one of ${shown}`}: run from there (cd ${rel[0]}), or give go -C ${rel[0]} before run.`;
  }
  const unbridged = bridgeProblemIn(dir);
  if (unbridged?.replaceMoved) return `${unbridged.problem}. Point the replace at the bridge again (in the editor: Reconcile Lab: Set Up Go Bridge…, which writes the installed extension's copy; or the bridge directory of a checkout), run go mod tidy, then run again.`;
  if (unbridged) return `${unbridged.problem}. Add it first (README "Your Go controller": in the editor Reconcile Lab: Set Up Go Bridge…, or its require and replace lines), add bridge.Setup and bridge.Options/bridge.Wrap to your code, run go mod tidy, then run again.`;
  return undefined;
}

/**
 * What to tell about a Go controller that announced the kind it reconciles (bridge.Wrap's object) but no resource:
 * the program's RESTMapper found none for the kind, so its CRD is not installed in this cluster (a newcomer's first
 * mistake; controller-runtime says so only when its CacheSyncTimeout, 2 minutes by default, ends the program).
 * Undefined when the announcement has a resource, or no kind to name.
 */
export function uninstalledKindProblem(name: string, announced: { group?: string; version?: string; kind?: string; resource?: string }): string | undefined {
  const unserved = unservedKind(name, announced);
  return unserved && `${unserved} (its RESTMapper found no resource for it): install its CRD (a kubebuilder project: make install, or kubectl apply -f config/crd/bases)`;
}

/** The first half of {@link uninstalledKindProblem}, for a caller that names the manifest to install itself: "the Go controller shelf reconciles Shelf (shop.example.org/v1alpha1), a kind the cluster does not serve". */
export function unservedKind(name: string, announced: { group?: string; version?: string; kind?: string; resource?: string }): string | undefined {
  if (announced.resource || !announced.kind) return undefined;
  const gv = announced.group ? `${announced.group}/${announced.version ?? ''}` : (announced.version ?? '');
  return `the Go controller ${name} reconciles ${announced.kind}${gv ? ` (${gv})` : ''}, a kind the cluster does not serve`;
}

/**
 * The kind a controller program's output says its cache cannot watch because the cluster does not serve it:
 * controller-runtime's `if kind is a CRD, it should be installed before calling Start` error, logged every 10 s for
 * each watched kind (For, Owns, Watches) whose CRD is missing, with the RESTMapper's `no matches for kind "Lamp" in
 * version "shop.example.org/v1"` (JSON or console logs, quotes escaped or not). Undefined for any other line.
 */
export function unservedKindInOutput(line: string): { kind: string; group: string; version?: string } | undefined {
  if (!line.includes('no matches for kind')) return undefined;
  // Each quote may be escaped once (the error is a string inside a JSON or console log line).
  const m = /no matches for kind \\?"(\w+)\\?" in (version|group) \\?"([^"\\]*)\\?"/.exec(line);
  if (!m) return undefined;
  const kind = m[1]!;
  if (m[2] === 'group') return { kind, group: m[3]! };
  const gv = m[3]!;
  const slash = gv.lastIndexOf('/');
  return slash < 0 ? { kind, group: '', version: gv } : { kind, group: gv.slice(0, slash), version: gv.slice(slash + 1) };
}

/** An informer of a controller program's cache that the API server's RBAC refused to list or watch. */
export interface ForbiddenCacheList {
  /** `list` or `watch`. */
  readonly verb: string;
  /** `plural.group` (`configmaps` for the core group). */
  readonly resource: string;
  /** The namespace the informer is scoped to; undefined: all namespaces (a cluster-wide list). */
  readonly namespace?: string;
  /** What to say: the missing right, the `kubectl auth can-i` line that checks it, and what to do. No credential. */
  readonly message: string;
}

/**
 * A line of a controller program's output in which client-go's reflector reports that the server refused its list or
 * watch (403 Forbidden: `Failed to watch … "error": "failed to list *v1.ConfigMap: configmaps is forbidden: User \"u\"
 * cannot list resource \"configmaps\" in API group \"\" at the cluster scope"`, JSON-escaped or not), or undefined for
 * any other line (a reconcile's own forbidden call is not a cache's). The informer retries with backoff and the
 * controller reconciles nothing until the caches of the kinds it watches have synced, which never happens without
 * the right: controller-runtime stops the manager after its CacheSyncTimeout (2 minutes by default).
 */
export function forbiddenCacheList(line: string): ForbiddenCacheList | undefined {
  if (!/Failed to watch|failed to (?:list|watch) \*?[\w.]+:/.test(line)) return undefined;
  const text = line.replace(/\\"/g, '"');
  const m = /cannot (list|watch) resource "([^"/]+)" in API group "([^"]*)" (?:in the namespace "([^"]+)"|at the cluster scope)/.exec(text);
  if (!m) return undefined;
  const [, verb, plural, group, namespace] = m as unknown as [string, string, string, string, string | undefined];
  const resource = group ? `${plural}.${group}` : plural;
  const scope = namespace ? `in namespace ${namespace}` : 'in all namespaces';
  const hint = forbiddenHint(m[0]).replace(/^\. /, '');
  const fix = namespace
    ? `leave ${namespace} out of the manager's cache, or get that right`
    : `limit the manager's cache to namespaces you may list (ctrl.Options{Cache: cache.Options{DefaultNamespaces: …}}, or a namespace flag of the program), or get that right`;
  return {
    verb,
    resource,
    ...(namespace ? { namespace } : {}),
    message: `the program's cache may not ${verb} ${resource} ${scope} (403 Forbidden). ${hint}. Its informer retries, but the controller reconciles nothing until the caches of the kinds it watches have synced, and controller-runtime stops the manager after its CacheSyncTimeout (2 minutes by default): ${fix}.`,
  };
}

/**
 * A hint for a controller program that ended while its cache was refused a list or watch (see
 * {@link forbiddenCacheList}): the first refusal in `output`, or undefined when there is none. It explains a cache sync
 * timeout better than {@link cacheSyncHint}'s "is the CRD installed?", so it is looked at first.
 */
export function forbiddenCacheHint(output: readonly string[]): string | undefined {
  for (const l of output) {
    const f = forbiddenCacheList(l);
    if (f) return `${f.message.charAt(0).toUpperCase()}${f.message.slice(1)}`;
  }
  return undefined;
}

/**
 * A hint for a controller program that ended because an informer of its cache never synced — what controller-runtime
 * reports when a kind's CRD is not installed (`timed out waiting for cache to be synced for kind source:
 * *v1alpha1.Shelf` after its CacheSyncTimeout, 2 minutes by default; `no matches for kind "Shelf"`). Undefined for any
 * other output.
 */
export function cacheSyncHint(output: readonly string[]): string | undefined {
  let kind: string | undefined;
  for (const l of output) {
    const m = /no matches for kind \\?"(\w+)\\?"/.exec(l) ?? /timed out waiting for cache to be synced for kind source: \*?(?:[\w]+\.)?(\w+)/.exec(l);
    if (m) {
      kind = m[1];
      break;
    }
  }
  if (!kind) return undefined;
  return `Its cache never synced ${kind} objects: is the ${kind} CRD installed in this cluster? controller-runtime waits for every watched kind's informer (CacheSyncTimeout, 2 minutes by default) and then stops. Install your CRDs first (a kubebuilder project: make install, or kubectl apply -f config/crd/bases), then run again.`;
}

/**
 * The serving certificate or key a controller's webhook server did not find (controller-runtime's webhook server
 * loads `tls.crt` / `tls.key` from its CertDir, `<temp-dir>/k8s-webhook-server/serving-certs` by default, when the
 * manager starts, before any cache or controller: `open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file
 * or directory`). Its path, or undefined when the output says nothing of the kind.
 */
export function missingWebhookCert(output: readonly string[]): string | undefined {
  for (const l of output) {
    const m = /open ([^\s"'\\]+\.(?:crt|key|pem)): no such file or directory/.exec(l);
    if (m && (/webhook/i.test(l))) return m[1];
  }
  return undefined;
}

/** The serving certificate controller-runtime's webhook server loads by default (its CertDir under the temp directory). */
export function defaultWebhookCertPath(): string {
  return join(tmpdir(), 'k8s-webhook-server', 'serving-certs', 'tls.crt');
}

/**
 * Whether a program in `dir` would stop at start-up for want of a webhook certificate: the module governing `dir`
 * reads ENABLE_WEBHOOKS (kubebuilder's switch: its webhooks are registered unless it is "false"), `env` (what the
 * program gets) does not set it to "false", and controller-runtime's default certificate `certPath` is absent.
 * Best effort, from the source text: a program with a CertDir of its own is not told apart.
 */
export function webhooksWouldStop(dir: string, env: Readonly<Record<string, string | undefined>>, certPath = defaultWebhookCertPath()): boolean {
  if (env.ENABLE_WEBHOOKS === 'false' || existsSync(certPath)) return false;
  const goMod = findGoMod(dir);
  return goMod !== undefined && readModuleCode(dirname(goMod)).readsEnableWebhooks;
}

/**
 * A hint for a controller program whose webhook server found no certificate ({@link missingWebhookCert}): a program
 * run outside the cluster has none. `readsEnableWebhooks`: its code reads ENABLE_WEBHOOKS (kubebuilder's scaffold
 * registers its webhooks only when that is not "false"). Undefined for any other output.
 */
export function webhookCertHint(output: readonly string[], readsEnableWebhooks: boolean): string | undefined {
  const path = missingWebhookCert(output);
  if (path === undefined) return undefined;
  const dir = path.slice(0, Math.max(0, path.lastIndexOf('/'))) || path;
  const off = readsEnableWebhooks
    ? 'Your program skips its webhooks when ENABLE_WEBHOOKS=false (kubebuilder\'s scaffold, run locally as make run ENABLE_WEBHOOKS=false): set it in the program\'s environment (in the editor: Run Without Webhooks, or reconcileLab.goController.env)'
    : 'Register the webhooks only when you want them, as kubebuilder\'s scaffold does (if os.Getenv("ENABLE_WEBHOOKS") != "false" around SetupWebhookWithManager), and run with ENABLE_WEBHOOKS=false';
  return `Its webhook server found no serving certificate (${path}): a controller run outside the cluster has none, and controller-runtime starts the webhook server before any controller. ${off}; or put a certificate and key (tls.crt, tls.key) in ${dir}.`;
}

/**
 * A hint for a controller program run outside the cluster with leader election on (kubebuilder's `--leader-elect`)
 * and no `LeaderElectionNamespace`: controller-runtime then reads the namespace from the service account's files,
 * which exist only in a pod, and `ctrl.NewManager` fails (`unable to find leader election namespace: not running
 * in-cluster, please specify LeaderElectionNamespace`), with or without Reconcile Lab. Undefined for any other output.
 */
export function leaderElectionNamespaceHint(output: readonly string[]): string | undefined {
  if (!output.some((l) => /unable to find leader election namespace/.test(l))) return undefined;
  return 'Its manager has leader election on but no LeaderElectionNamespace: outside the cluster controller-runtime cannot find the namespace of the lease (it reads it from the pod\'s service account), so ctrl.NewManager fails. Run without it (--leader-elect=false, as make run does; in the editor: reconcileLab.goController.args), or set LeaderElectionNamespace in the manager\'s ctrl.Options (e.g. from a flag) to a namespace of the cluster where the lease may be kept.';
}

/**
 * A hint for a controller program that could not bind its metrics or health-probe address (`listen tcp :8081: bind:
 * address already in use`): kubebuilder's defaults :8080 / :8081 are taken, most often by another instance of the
 * same program (`make run` in a terminal). Undefined for any other output.
 */
export function addressInUseHint(output: readonly string[]): string | undefined {
  const addr = output.map((l) => /listen tcp ([^\s:]*:\d+): bind: address already in use/.exec(l)?.[1]).find((a) => a !== undefined);
  if (addr === undefined) return undefined;
  return `Another process already listens on ${addr} (kubebuilder's metrics :8080 / health probes :8081): most often another instance of your program (make run in a terminal, or one Run Controller… started in an editor window whose browser tab was closed or reloaded: code-server keeps that window's extensions running for a while), which also reconciles the same objects. Stop it, or give this one other addresses, e.g. --metrics-bind-address=0 --health-probe-bind-address=0 (0 turns them off; in the editor: reconcileLab.goController.args).`;
}
