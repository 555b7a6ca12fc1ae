// Packaging: the package script's vsce step produces a .vsix whose contents are what an installed extension needs
// (bundles, icon, samples), nothing it must not ship (sources, tests, node_modules, source maps), a manifest with
// the icon and the repository, and a README whose images and links resolve on the Marketplace (absolute URLs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';

const ROOT = join(import.meta.dirname, '../../..');

/** The entries of a zip file (its central directory), with a reader for each one. */
function readZip(buf: Buffer): Map<string, () => Buffer> {
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  assert.ok(eocd >= 0, 'a zip end-of-central-directory record');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = new Map<string, () => Buffer>();
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, 'a central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    out.set(name, () => {
      const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
      const data = buf.subarray(start, start + size);
      return method === 8 ? inflateRawSync(data) : Buffer.from(data);
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/** The images of the Get Started walkthrough, as paths inside the .vsix (they must be packaged to show). */
function walkthroughImages(manifest: unknown): string[] {
  const w = (manifest as { contributes?: { walkthroughs?: Array<{ steps: Array<{ media?: { image?: string } }> }> } }).contributes?.walkthroughs ?? [];
  const images = w.flatMap((x) => x.steps.map((s) => s.media?.image)).filter((i): i is string => typeof i === 'string');
  assert.ok(images.length >= 4, 'the walkthrough shows images');
  return images.map((i) => `extension/${i}`);
}

test('npm run package: the vsce step makes a .vsix with the bundles, the icon and a Marketplace-ready README', { timeout: 180_000 }, () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; icon?: string; repository?: { url?: string } };
  const script = manifest.scripts.package!;
  const [build, vsce] = script.split('&&').map((s) => s.trim());
  assert.match(build!, /^node scripts\/build\.mjs --production$/);
  assert.match(vsce!, /^vsce package --no-dependencies --out dist\/reconcile-lab\.vsix$/, 'relative README links are rewritten (no --no-rewrite-relative-links)');
  // The bundles as the build phase made them (built here when missing); the production build only minifies them.
  if (!existsSync(join(ROOT, 'dist/extension.js'))) {
    const b = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(b.status, 0, b.stderr);
  }
  const dir = mkdtempSync(join(tmpdir(), 'rl-vsix-'));
  try {
    const out = join(dir, 'reconcile-lab.vsix');
    const args = vsce!.split(/\s+/).slice(1).map((a) => (a === 'dist/reconcile-lab.vsix' ? out : a));
    const r = spawnSync(join(ROOT, 'node_modules/.bin/vsce'), args, {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const zip = readZip(readFileSync(out));
    const names = [...zip.keys()];
    for (const f of ['extension/package.json', 'extension/readme.md', 'extension/LICENSE.txt', 'extension/dist/extension.js', 'extension/dist/cli.js', 'extension/dist/webview/eventLog.js', 'extension/media/icon.png', 'extension/media/eventLog.css', 'extension/samples/crd.yaml', 'extension/samples/widgets.yaml', ...walkthroughImages(manifest)]) {
      assert.ok(names.includes(f), `${f} is in the .vsix`);
    }
    for (const bad of [/^extension\/src\//, /^extension\/test\//, /^extension\/node_modules\//, /\.map$/, /^extension\/docs\//, /^extension\/dist\/test\//, /\.vsix$/]) {
      assert.deepEqual(names.filter((n) => bad.test(n)), [], `nothing matching ${bad}`);
    }
    const packaged = JSON.parse(zip.get('extension/package.json')!().toString('utf8')) as typeof manifest;
    assert.equal(packaged.icon, 'media/icon.png');
    assert.match(packaged.repository?.url ?? '', /^https:\/\/github\.com\/[^/]+\/[^/]+/);
    const png = zip.get('extension/media/icon.png')!();
    assert.equal(png.subarray(1, 4).toString('ascii'), 'PNG');
    assert.ok(png.readUInt32BE(16) >= 128 && png.readUInt32BE(20) >= 128, 'the Marketplace needs an icon of at least 128×128');
    const readme = zip.get('extension/readme.md')!().toString('utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]!);
    assert.ok(images.length >= 3, 'the README shows screenshots');
    for (const src of images) assert.match(src, /^https:\/\/github\.com\/[^/]+\/[^/]+\/raw\/HEAD\/docs\/images\/[\w.-]+\.png$/, 'images resolve on the Marketplace');
    for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g)) assert.match(target!, /^(https?:\/\/|#)/, `link ${target} resolves outside the repository`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
