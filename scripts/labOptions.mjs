// The command line of `npm run lab` (scripts/lab.mjs): its usage text and the parser that turns arguments into
// options. Kept apart from lab.mjs so it can be tested without starting anything.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';

/** What `npm run lab -- --help` prints. Lists exactly the options {@link parseLabArgs} accepts. */
export const LAB_USAGE = `usage: npm run lab [-- [options] [<folder>]]
       node scripts/run.cjs lab [options] [<folder>]

Starts a local control plane with the sample Widget CRD and objects, then opens VS Code with
Reconcile Lab connected to it. Ctrl-C stops everything.

options:
  --folder <path>  the folder VS Code opens instead of the repository's samples/, e.g. your controller's
                   project (absolute, or relative to the directory you ran the command in); a path
                   without --folder means the same
  --no-vscode      start the cluster only; no VS Code
  --browser        use code-server in a browser even when desktop \`code\` is on PATH
  --port <n>       code-server's port on 127.0.0.1 (default: any free port)
  -h, --help       print this text

environment: RECONCILE_LAB_VSCODE=desktop|browser|auto, RECONCILE_LAB_PORT=<n> (as --port),
             RECONCILE_LAB_CACHE=<dir> (where the control plane and code-server are cached)
`;

/**
 * A wrong command line. `message` names the offending argument; the caller prints it with {@link LAB_USAGE}'s
 * first line and exits with status 2.
 */
export class LabUsageError extends Error {}

/**
 * Parses the lab's arguments (what follows `npm run lab --`). Accepts `--opt value` and `--opt=value`.
 *
 * @param {string[]} args
 * @param {object} context
 * @param {string} context.cwd   directory a relative folder is resolved against: where the person ran the command
 *   (npm's INIT_CWD, which scripts/run.cjs passes on), not the repository root the script runs in
 * @param {string} context.root  the repository root; the default folder is its `samples/`
 * @returns {{ help: true } | { help: false, vscode: boolean, browser: boolean, port: number | undefined, folder: string }}
 *   `folder` is absolute and is an existing directory
 * @throws {LabUsageError} for an unknown option, a missing or bad value, a second folder, a folder that is not an
 *   existing directory, or a folder together with --no-vscode (nothing would open it)
 */
export function parseLabArgs(args, { cwd, root }) {
  let vscode = true;
  let browser = false;
  let port;
  let folderArg;
  const setFolder = (value, how) => {
    if (folderArg !== undefined) throw new LabUsageError(`two folders given (${folderArg} and ${value}); VS Code opens one`);
    if (value === undefined || value === '') throw new LabUsageError(`${how} needs a path`);
    folderArg = value;
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = () => (inline !== undefined ? inline : args[++i]);
    const noValue = () => {
      if (inline !== undefined) throw new LabUsageError(`${name} takes no value (got ${arg})`);
    };
    switch (name) {
      case '-h':
      case '--help':
        return { help: true };
      case '--no-vscode':
        noValue();
        vscode = false;
        break;
      case '--browser':
        noValue();
        browser = true;
        break;
      case '--port': {
        const v = value();
        if (v === undefined || !/^\d+$/.test(v) || Number(v) > 65535) throw new LabUsageError(`--port needs a port number from 0 to 65535 (got ${v === undefined ? 'nothing' : v})`);
        port = Number(v);
        break;
      }
      case '--folder':
        setFolder(value(), '--folder');
        break;
      default:
        if (arg.startsWith('-')) throw new LabUsageError(`unknown option ${arg}`);
        setFolder(arg, 'a folder');
    }
  }
  let folder = resolve(root, 'samples');
  if (folderArg !== undefined) {
    if (!vscode) throw new LabUsageError(`a folder (${folderArg}) is opened in VS Code, which --no-vscode leaves out`);
    folder = resolve(cwd, folderArg);
    let isDir = false;
    try {
      isDir = statSync(folder).isDirectory();
    } catch {
      throw new LabUsageError(`the folder ${folder} does not exist`);
    }
    if (!isDir) throw new LabUsageError(`${folder} is a file, not a folder`);
  }
  return { help: false, vscode, browser, port, folder };
}
