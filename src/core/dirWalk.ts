import { readdirSync, type Dirent } from 'node:fs';
import { join, resolve } from 'node:path';

/** The bounds of {@link walkDirs}. */
export interface DirWalkLimits {
  /** How many directory levels below a root are entered (0: the roots only). */
  maxDepth: number;
  /** How many directories are read in all (a huge tree is cut off, never an error). */
  maxDirs: number;
  /** Directory names never entered, besides names starting with `.` or `_` (which Go ignores too). */
  skip: ReadonlySet<string>;
}

/**
 * Reads the directories in and below `roots` breadth first (shallower before deeper, so a budget cut keeps what is
 * nearest the roots) and calls `visit` with each directory's entries in name order, its depth and the root it is
 * under. Each directory is read once; one that cannot be read is skipped. Synchronous, bounded work: a search of a
 * developer's project (controller modules, CRD manifests).
 */
export function walkDirs(roots: readonly string[], limits: DirWalkLimits, visit: (dir: string, entries: readonly Dirent[], depth: number, root: string) => void): void {
  let budget = limits.maxDirs;
  const seen = new Set<string>();
  let level = [...new Set(roots.map((r) => resolve(r)))].map((dir) => ({ dir, root: dir }));
  for (let depth = 0; depth <= limits.maxDepth && level.length > 0 && budget > 0; depth++) {
    const next: typeof level = [];
    for (const { dir, root } of level) {
      if (seen.has(dir) || budget-- <= 0) continue;
      seen.add(dir);
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      } catch {
        continue;
      }
      visit(dir, entries, depth, root);
      for (const e of entries) {
        if (e.isDirectory() && !e.name.startsWith('.') && !e.name.startsWith('_') && !limits.skip.has(e.name)) next.push({ dir: join(dir, e.name), root });
      }
    }
    level = next;
  }
}
