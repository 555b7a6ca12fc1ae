// README.md names settings, commands, npm scripts, CLI flags and example command lines a new user types as written:
// each must exist (package.json contributes / scripts, the CLI's parser), so that the README cannot drift from them.
// (Links and anchors: test/unit/host-free/docsLinks.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS, commandFlags, parseCliArgs, UsageError } from '../../../src/cli/args.ts';
import { splitCommandLine } from '../../../src/core/reconcilers/commandLine.ts';
import { CommandIds, ContextKeys, ViewIds, WalkthroughSteps } from '../../../src/host/ids.ts';
import { ENTRY_KINDS } from '../../../src/shared/protocol.ts';

const ROOT = join(import.meta.dirname, '../../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  contributes: { commands: Array<{ command: string; title: string; category: string }>; configuration: Array<{ properties: Record<string, { default?: unknown }> }> };
};
const settings: Record<string, { default?: unknown }> = Object.assign({}, ...pkg.contributes.configuration.map((c) => c.properties));
/** README's text outside fenced code blocks. */
const prose = README.replace(/```[\s\S]*?```/g, '');

/** `reconcileLab.*` keys the README shows as mistakes (what a misspelt key is told): they must stay no setting. */
const SHOWN_AS_WRONG = ['reconcileLab.reconciler.predicate'];

test("README's settings tables: every key is a setting of package.json, with the default the table says; every setting is in the README", () => {
  const rows = [...README.matchAll(/^\| `(reconcileLab\.[\w.]+)` \| `([^`]*)` \|/gm)];
  assert.ok(rows.length >= 20, `the settings tables (${rows.length} rows)`);
  for (const [, key, shown] of rows) {
    assert.ok(key! in settings, `README's settings table names ${key}, which package.json does not contribute`);
    const d = settings[key!]!.default;
    assert.equal(shown, d === '' ? '""' : typeof d === 'string' ? d : JSON.stringify(d), `README's default of ${key}`);
  }
  for (const key of Object.keys(settings)) assert.ok(README.includes(`\`${key}\``), `setting ${key} is not in the README`);
});

test('every reconcileLab.* name the README mentions is a setting, command, view, context key or walkthrough key', () => {
  const known = new Set<string>([...Object.keys(settings), ...Object.values(CommandIds), ...Object.values(ViewIds), ...Object.values(ContextKeys), ...Object.values(WalkthroughSteps)]);
  for (const w of SHOWN_AS_WRONG) assert.ok(!known.has(w), `${w} is shown as a mistake but exists`);
  // Not `reconcileLab.walkthrough.<connected|…>`, `reconcileLab.goController.*` (families) nor src/host/reconcileLab.ts.
  const names = new Set([...README.matchAll(/(?<![/\w])reconcileLab\.[A-Za-z][\w.]*[A-Za-z0-9](?![\w<]|\.[\w<*])/g)].map((m) => m[0]));
  assert.ok(names.size >= 20, `names found (${names.size})`);
  for (const n of names) {
    if (SHOWN_AS_WRONG.includes(n)) continue;
    assert.ok(known.has(n), `README mentions ${n}, which is none of package.json's settings, commands, views or context keys`);
  }
});

test('every **Reconcile Lab: …** the README tells you to run is a command palette title of package.json', () => {
  const titles = new Set(pkg.contributes.commands.map((c) => `${c.category}: ${c.title}`));
  const named = [...prose.matchAll(/\*\*(Reconcile Lab: [^*]+)\*\*/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
  assert.ok(named.length >= 10, `command names found (${named.length})`);
  // Not commands: the Go Controller output channel and the launch snippet (checked where they are defined).
  const other = new Set(['Reconcile Lab: Go Controller', 'Reconcile Lab: Debug Go controller']);
  for (const t of named) if (!other.has(t)) assert.ok(titles.has(t), `README's **${t}** is no command title (titles: ${[...titles].join(', ')})`);
});

test('every `npm run X` of the README is a script of package.json', () => {
  const runs = new Set([...README.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!));
  assert.ok(runs.size >= 5);
  for (const r of runs) assert.ok(r in pkg.scripts, `npm run ${r}: no such script`);
});

test("the README's CLI usage block lists exactly the CLI's options, and every reconcile-lab example parses", () => {
  const block = /```\nreconcile-lab <command> \[args\] \[options\]\n([\s\S]*?)```/.exec(README);
  assert.ok(block, "README's CLI usage block");
  const inBlock = new Set([...block[1]!.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!));
  const options = new Set([...COMMANDS.flatMap((c) => commandFlags(c)), 'version']);
  for (const f of inBlock) assert.ok(options.has(f), `README's usage block names --${f}, which the CLI does not take`);
  for (const f of options) assert.ok(inBlock.has(f), `the CLI's --${f} is missing from README's usage block`);
  // Example command lines, in code blocks and spans: each parses (placeholders such as <command> aside).
  const examples = new Set<string>();
  let fenced = false;
  for (const line of README.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (fenced && /^reconcile-lab \S/.test(line)) examples.add(line.replace(/\s+#.*$/, ''));
  }
  for (const m of prose.matchAll(/`(reconcile-lab [^`]+)`/g)) examples.add(m[1]!);
  let parsed = 0;
  for (const example of examples) {
    if (/<command>/.test(example)) continue;
    const argv = splitCommandLine(example.split(/\s[|>]\s|\s&&\s/)[0]!).slice(1);
    try {
      parseCliArgs(argv);
      parsed++;
    } catch (e) {
      assert.ok(!(e instanceof UsageError), `README's example "${example}" is a usage error: ${(e as Error).message}`);
      throw e;
    }
  }
  assert.ok(parsed >= 10, `examples parsed (${parsed})`);
});

test('a message the README quotes in bold ("…") is the text the code says (it quoted "object changed — refresh and retry", which nothing prints)', () => {
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(join(ROOT, 'src', f), 'utf8')).join('\n');
  const quoted = [...prose.matchAll(/\*\*"([^"*]+)"\*\*/g)].map((m) => m[1]!.replace(/\s+/g, ' ').replace(/^… /, ''));
  assert.ok(quoted.length >= 1);
  for (const q of quoted) assert.ok(sources.includes(q), `README quotes "${q}", which no source file says`);
});

test("README's command table names command titles (\"Start / Pause / Resume / Stop Reconcile Loop\" is four), and every command of the palette is in the README", () => {
  const pkgFull = pkg as typeof pkg & { contributes: { menus?: { commandPalette?: Array<{ command: string; when?: string }> } } };
  const titles = new Set(pkg.contributes.commands.map((c) => c.title));
  const start = README.indexOf('| Command | What it does |');
  assert.ok(start >= 0, "README's command table");
  const rows = README.slice(start).split('\n\n')[0]!.split('\n').slice(2);
  assert.ok(rows.length >= 20, `command rows (${rows.length})`);
  const named = new Set<string>();
  for (const row of rows) {
    const cell = row.replace(/^\| /, '').split(' | ')[0]!.replace(/ \([^)]*\)$/, '');
    const parts = cell.split(' / ');
    const last = parts.at(-1)!;
    // "Start / Pause / Stop Reconcile Loop": a one-word part takes the last part's words after its first.
    for (const p of parts) {
      const title = p.includes(' ') || !last.includes(' ') ? p : p + last.slice(last.indexOf(' '));
      assert.ok(titles.has(title), `README's command table names "${title}", which is no command title`);
      named.add(title);
    }
  }
  const hidden = new Set((pkgFull.contributes.menus?.commandPalette ?? []).filter((m) => m.when === 'false').map((m) => m.command));
  for (const c of pkg.contributes.commands) if (!hidden.has(c.command)) assert.ok(named.has(c.title) || README.includes(c.title), `the palette's "${c.category}: ${c.title}" is nowhere in the README`);
});

test("the README lists the Event Log's kind labels as the Event Log shows them, in the kind filter's order", () => {
  const labels = [...ENTRY_KINDS.values()].map((k) => k.label);
  const text = prose.replace(/\s+/g, ' ');
  assert.ok(text.includes(`path through the controller: ${labels.join(', ')} (the loop's or yours)`), `README's Event Log names the kinds ${labels.join(', ')}`);
  // The internal name it gives as an example is one of them.
  const named = /`"kind": "(\w+)"`/.exec(text)?.[1];
  assert.ok(named !== undefined && ENTRY_KINDS.has(named), `README's example internal kind ${named}`);
});

/**
 * Evaluates a `when` clause of package.json the way VS Code does for the forms the manifest uses (`a`, `!a`,
 * `a == v`, `&&`, `||`; `&&` binds tighter) against `ctx` (a key it does not hold is unset: falsy).
 */
function whenHolds(when: string, ctx: Map<string, string | boolean>): boolean {
  return when.split('||').some((conj) => conj.split('&&').every((lit) => {
    const s = lit.trim();
    const eq = /^(\S+)\s*==\s*(\S+)$/.exec(s);
    if (eq) return String(ctx.get(eq[1]!) ?? '') === eq[2];
    if (s.startsWith('!')) return !ctx.get(s.slice(1).trim());
    return Boolean(ctx.get(s));
  }));
}

test('a command a view\'s welcome offers as a button is in the command palette whenever that welcome shows (a newcomer who reads it can also type it)', () => {
  const c = (pkg as unknown as { contributes: { viewsWelcome: Array<{ view: string; contents: string; when?: string }>; menus: { commandPalette: Array<{ command: string; when?: string }> } } }).contributes;
  const palette = new Map(c.menus.commandPalette.map((m) => [m.command, m.when]));
  const declared = new Set(pkg.contributes.commands.map((x) => x.command));
  let checked = 0;
  for (const welcome of c.viewsWelcome) {
    // Each alternative of the welcome's clause is a state in which it shows: its literals set, every other key unset.
    for (const conj of (welcome.when ?? 'true').split('||')) {
      const ctx = new Map<string, string | boolean>();
      for (const lit of conj.split('&&').map((l) => l.trim())) {
        const eq = /^(\S+)\s*==\s*(\S+)$/.exec(lit);
        if (eq) ctx.set(eq[1]!, eq[2]!);
        else if (!lit.startsWith('!')) ctx.set(lit, true);
      }
      for (const [, command] of welcome.contents.matchAll(/\(command:([\w.]+)/g)) {
        if (!declared.has(command!)) continue; // a built-in command (workbench.*)
        const when = palette.get(command!);
        if (when === undefined || when === 'false') continue; // always listed, or deliberately never
        checked++;
        assert.ok(whenHolds(when, ctx), `${welcome.view}'s welcome (when ${conj.trim()}) offers ${command}, which the palette hides then (when ${when})`);
      }
    }
  }
  assert.ok(checked >= 3, `welcome buttons checked against the palette (${checked})`);
});
