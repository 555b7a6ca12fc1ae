// The Node a script of this repository needs. The scripts import the TypeScript sources directly, which takes Node's
// type stripping (Node 22.18+; the project pins Node 24, which `npm run …` and `node scripts/run.cjs <name>` use).
// Started directly with an older Node (`node scripts/lab.mjs` on a system Node 20) a script would otherwise die on
// its first TypeScript import with ERR_UNKNOWN_FILE_EXTENSION, which says nothing of the cause. This module imports
// no TypeScript: a script calls {@link requireScriptNode} before its first (dynamic) TypeScript import.

/** True when `version` ("v22.18.0") strips TypeScript types without a flag. */
export function stripsTypes(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 18);
}

/**
 * Ends the process with status 2 and a message saying how to run `name` when this Node cannot load the TypeScript
 * sources; returns otherwise.
 *
 * @param {string} name  the script's name under scripts/ without ".mjs" (what scripts/run.cjs takes)
 */
export function requireScriptNode(name) {
  if (stripsTypes(process.version)) return;
  console.error(
    `scripts/${name}.mjs needs Node 22.18 or newer (it loads the TypeScript sources); this is Node ${process.version}. ` +
      `Run it with the project's pinned Node 24: node scripts/run.cjs ${name} [args] (installs it on first use)${name === 'lab' ? ', or npm run lab' : name === 'test' ? ', or npm test' : ''}.`,
  );
  process.exit(2);
}
