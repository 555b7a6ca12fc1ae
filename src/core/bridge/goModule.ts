import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

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

/**
 * Reads what a go.mod's text says about the bridge (the `go` command's syntax: `//` comments, single-line
 * directives and parenthesized blocks). Only reads: edits go through `go mod edit` ({@link bridgeEditArgs}).
 */
export function readBridgeInGoMod(goModPath: string, text: string): BridgeInGoMod {
  let module: string | undefined;
  let requires = false;
  let replace: string | undefined;
  let block: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    if (block) {
      if (line === ')') {
        block = undefined;
        continue;
      }
      if (block === 'require' && firstWord(line) === BRIDGE_MODULE_PATH) requires = true;
      if (block === 'replace') replace = replaceTarget(line) ?? replace;
      continue;
    }
    const m = /^(module|require|replace)\s*(.*)$/.exec(line);
    if (!m) continue;
    const [, verb, rest] = m as unknown as [string, string, string];
    if (rest === '(') {
      block = verb;
      continue;
    }
    if (verb === 'module') module = unquote(rest.trim());
    else if (verb === 'require' && firstWord(rest) === BRIDGE_MODULE_PATH) requires = true;
    else if (verb === 'replace') replace = replaceTarget(rest) ?? replace;
  }
  const local = replace !== undefined && (replace.startsWith('./') || replace.startsWith('../') || isAbsolute(replace) || replace === '.' || replace === '..');
  return {
    ...(module !== undefined ? { module } : {}),
    requires,
    ...(replace !== undefined ? { replace } : {}),
    ...(local ? { replaceDir: resolve(dirname(goModPath), replace!) } : {}),
  };
}

function firstWord(s: string): string {
  return unquote(s.trim().split(/\s+/)[0] ?? '');
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') && s.length >= 2 ? s.slice(1, -1) : s;
}

/** "old [v] => new [v]": new (with its version, if any) when old is the bridge module. */
function replaceTarget(s: string): string | undefined {
  const [left, right] = s.split('=>');
  if (right === undefined || firstWord(left ?? '') !== BRIDGE_MODULE_PATH) return undefined;
  const parts = right.trim().split(/\s+/).map(unquote);
  return parts.join(' ');
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

/** `bridgeProblem` of the go.mod governing `dir`; undefined when there is none, or a go.work decides instead. */
export function bridgeProblemIn(dir: string): { goMod: string; problem: string } | undefined {
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
  return problem ? { goMod, problem } : undefined;
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
