// Every link in the README and docs/ resolves: relative links name files or folders that exist, and #anchors name
// headings (GitHub's slugs) of the file they point into. External links are not fetched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '../../..');

/** GitHub's heading anchor: lower case, punctuation dropped (not hyphens/underscores), spaces → hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

function links(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

test('README.md and docs/*.md: relative links and anchors resolve', () => {
  const files = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const link of links(file)) {
      if (/^(https?:|mailto:)/.test(link)) continue;
      checked++;
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path ? join(dirname(file), decodeURIComponent(path)) : file;
      const where = `${relative(ROOT, file)}: ${link}`;
      if (!existsSync(target)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) broken.push(`${where} (no heading #${anchor})`);
    }
  }
  assert.ok(checked > 5, 'links were found');
  assert.deepEqual(broken, []);
});
