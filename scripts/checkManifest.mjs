#!/usr/bin/env node
// Checks package.json `contributes` against the identifier modules, in both directions:
//   src/host/ids.ts       CommandIds, ViewIds, ContextKeys, LoopStates, ContextValues
//   src/host/settings.ts  SETTINGS_SECTION, SettingDefaults
// Every declared command is a known id and every id is declared; every command used in menus, keybindings and welcome
// links exists; views match; every `reconcileLab.*` context key, `viewItem` value and loop state used in a when clause
// is declared; configuration keys and defaults equal SettingDefaults. (That every CommandId has a handler is enforced
// by the type of the command table, `Record<CommandId, …>`, at typecheck time.)
// Runs on Node >= 22.18 (type stripping loads the .ts modules). Exit code 1 lists every problem.
import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');

/** Loads the identifier modules (src/host/ids.ts, src/host/settings.ts). */
export async function loadIdModules() {
  const ids = await import(pathToFileURL(resolve(root, 'src/host/ids.ts')).href);
  const settings = await import(pathToFileURL(resolve(root, 'src/host/settings.ts')).href);
  return { ids, settings };
}

/** Returns the list of problems of manifest `pkg` against the id modules (empty: consistent). */
export function checkManifest(pkg, { ids, settings }) {
  const problems = [];
  const c = pkg.contributes ?? {};
  const commandIds = new Set(Object.values(ids.CommandIds));
  const viewIds = new Set([ids.ViewIds.resources, ids.ViewIds.queue]);
  const contextKeys = new Set(Object.values(ids.ContextKeys));
  const contextNouns = new Set(Object.values(ids.ContextValues).map((v) => v.split(':')[1]));

  // --- commands ----------------------------------------------------------------------------------------------------
  const declared = new Map();
  for (const cmd of c.commands ?? []) {
    if (declared.has(cmd.command)) problems.push(`command ${cmd.command} is declared twice`);
    declared.set(cmd.command, cmd);
    if (!commandIds.has(cmd.command)) problems.push(`package.json declares command ${cmd.command}, which is not in CommandIds`);
    if (!cmd.title) problems.push(`command ${cmd.command} has no title`);
    if (cmd.category !== 'Reconcile Lab') problems.push(`command ${cmd.command} should have category "Reconcile Lab"`);
  }
  for (const id of commandIds) if (!declared.has(id)) problems.push(`CommandIds.${id} is not declared in package.json contributes.commands`);

  const whens = [];
  for (const [menu, items] of Object.entries(c.menus ?? {})) {
    for (const item of items) {
      if (item.command && !declared.has(item.command)) problems.push(`menu ${menu} uses unknown command ${item.command}`);
      if (item.when) whens.push([`menus.${menu} ${item.command}`, item.when]);
    }
  }
  for (const kb of c.keybindings ?? []) {
    if (!declared.has(kb.command)) problems.push(`keybinding ${kb.key} uses unknown command ${kb.command}`);
    if (kb.when) whens.push([`keybinding ${kb.key}`, kb.when]);
  }
  for (const w of c.viewsWelcome ?? []) {
    for (const m of w.contents.matchAll(/\(command:([A-Za-z0-9_.]+)\)/g)) {
      if (!declared.has(m[1])) problems.push(`viewsWelcome of ${w.view} links unknown command ${m[1]}`);
    }
    if (!viewIds.has(w.view)) problems.push(`viewsWelcome refers to unknown view ${w.view}`);
    if (w.when) whens.push([`viewsWelcome ${w.view}`, w.when]);
  }

  // --- the Get Started walkthrough ---------------------------------------------------------------------------------
  // One walkthrough (WalkthroughIds.gettingStarted); every step links declared commands (or the views' container),
  // completes on declared commands, context keys or views, and shows a packaged image (media/ is in the .vsix).
  const walkthroughs = c.walkthroughs ?? [];
  const wantedWalkthroughs = new Set(Object.values(ids.WalkthroughIds ?? {}));
  for (const w of walkthroughs) if (!wantedWalkthroughs.has(w.id)) problems.push(`package.json declares walkthrough ${w.id}, which is not in WalkthroughIds`);
  for (const id of wantedWalkthroughs) if (!walkthroughs.some((w) => w.id === id)) problems.push(`WalkthroughIds.${id} is not declared in contributes.walkthroughs`);
  const containerView = `workbench.view.extension.${ids.ViewIds.container}`;
  for (const w of walkthroughs) {
    for (const id of Object.keys(ids.WalkthroughSteps ?? {})) if (!(w.steps ?? []).some((st) => st.id === id)) problems.push(`WalkthroughSteps.${id} is no step of walkthrough ${w.id}`);
    if (!w.title || !w.description) problems.push(`walkthrough ${w.id} needs a title and a description`);
    const stepIds = new Set();
    for (const step of w.steps ?? []) {
      const where = `walkthrough ${w.id} step ${step.id}`;
      if (stepIds.has(step.id)) problems.push(`${where} is declared twice`);
      stepIds.add(step.id);
      if (!step.title || !step.description) problems.push(`${where} needs a title and a description`);
      const links = [...(step.description ?? '').matchAll(/\(command:([A-Za-z0-9_.]+)\)/g)].map((m) => m[1]);
      if (links.length === 0) problems.push(`${where} links no command (a step without a button completes when it is merely selected)`);
      for (const cmd of links) if (!declared.has(cmd) && cmd !== containerView) problems.push(`${where} links unknown command ${cmd}`);
      for (const ev of step.completionEvents ?? []) {
        const [kind, arg] = [ev.slice(0, ev.indexOf(':')), ev.slice(ev.indexOf(':') + 1)];
        // VS Code ticks an onCommand step when the command runs, even when it fails (not connected, a cancelled
        // pick): a step completes on its context key instead, which the extension sets only on success.
        if (kind === 'onCommand') problems.push(`${where}: completion event ${ev} ticks the step even when the command fails; complete on the step's context key (WalkthroughSteps), set on success`);
        else if (kind === 'onContext' ? !contextKeys.has(arg) : kind === 'onView' ? !viewIds.has(arg) : true) {
          problems.push(`${where}: completion event ${ev} names no declared command, context key or view`);
        }
      }
      if (!(step.completionEvents ?? []).length) problems.push(`${where} has no completion event`);
      // The window's own progress key (src/host/walkthrough.ts): VS Code misses events from before its walkthrough
      // service existed, so every step also completes on the key the extension sets again when the walkthrough opens.
      const own = ids.WalkthroughSteps?.[step.id];
      if (!own) problems.push(`${where} is not in WalkthroughSteps`);
      else if (!(step.completionEvents ?? []).includes(`onContext:${own}`)) problems.push(`${where} does not complete on onContext:${own}`);
      const image = step.media?.image;
      if (typeof image !== 'string' || !step.media?.altText) problems.push(`${where} needs media.image and media.altText`);
      else if (!image.startsWith('media/') || !existsSync(resolve(root, image))) problems.push(`${where}: image ${image} is not a file under media/ (the packaged folder)`);
    }
  }

  // --- views -------------------------------------------------------------------------------------------------------
  const containers = c.viewsContainers?.activitybar ?? [];
  if (!containers.some((v) => v.id === ids.ViewIds.container)) problems.push(`no activity-bar container ${ids.ViewIds.container}`);
  for (const v of containers) if (v.icon && !existsSync(resolve(root, v.icon))) problems.push(`container icon ${v.icon} does not exist`);
  const declaredViews = new Set((c.views?.[ids.ViewIds.container] ?? []).map((v) => v.id));
  for (const v of viewIds) if (!declaredViews.has(v)) problems.push(`view ${v} is not declared in contributes.views.${ids.ViewIds.container}`);
  for (const v of declaredViews) if (!viewIds.has(v)) problems.push(`package.json declares view ${v}, which is not in ViewIds`);

  // --- when clauses ------------------------------------------------------------------------------------------------
  const loopStates = new Set(ids.LoopStates);
  for (const [where, when] of whens) {
    // A quoted 'reconcileLab.…' is a string literal (webviewId == 'reconcileLab.eventLog'), not a context key.
    for (const m of when.matchAll(/(?<![\w:.'"])reconcileLab\.[A-Za-z.]+/g)) {
      const key = m[0];
      if (!contextKeys.has(key) && !viewIds.has(key)) problems.push(`${where}: when clause uses undeclared context key ${key}`);
    }
    for (const m of when.matchAll(/config\.(reconcileLab\.[A-Za-z.]+)/g)) {
      const k = m[1].slice('reconcileLab.'.length);
      if (!(k in settings.SettingDefaults)) problems.push(`${where}: when clause uses unknown setting ${m[1]}`);
    }
    for (const m of when.matchAll(/reconcileLab:([A-Za-z]+)/g)) {
      if (!contextNouns.has(m[1])) problems.push(`${where}: viewItem noun "${m[1]}" is not in ContextValues`);
    }
    for (const m of when.matchAll(/reconcileLab\.loopState\s*==\s*([A-Za-z]+)/g)) {
      if (!loopStates.has(m[1])) problems.push(`${where}: loop state "${m[1]}" is not in LoopStates`);
    }
  }

  // --- settings ----------------------------------------------------------------------------------------------------
  const props = {};
  for (const section of Array.isArray(c.configuration) ? c.configuration : [c.configuration ?? {}]) {
    if (!section.title) problems.push('a configuration category has no title');
    for (const [k, v] of Object.entries(section.properties ?? {})) {
      if (k in props) problems.push(`setting ${k} is declared twice`);
      props[k] = v;
    }
  }
  const prefix = `${settings.SETTINGS_SECTION}.`;
  for (const [k, def] of Object.entries(settings.SettingDefaults)) {
    const p = props[prefix + k];
    if (!p) {
      problems.push(`setting ${prefix + k} (SettingDefaults) is not declared in package.json`);
      continue;
    }
    if (!isDeepStrictEqual(p.default, def)) problems.push(`setting ${prefix + k}: package.json default ${JSON.stringify(p.default)} != SettingDefaults ${JSON.stringify(def)}`);
    if (!p.description && !p.markdownDescription) problems.push(`setting ${prefix + k} has no description`);
    if (p.enum && !p.enum.includes(def)) problems.push(`setting ${prefix + k}: default ${JSON.stringify(def)} is not in its enum`);
  }
  for (const k of Object.keys(props)) {
    if (!k.startsWith(prefix) || !(k.slice(prefix.length) in settings.SettingDefaults)) problems.push(`package.json declares setting ${k}, which is not in SettingDefaults`);
  }
  // Numeric settings: the range the host clamps to (SettingRanges) is the one package.json declares.
  for (const [k, p] of Object.entries(props)) {
    if (!k.startsWith(prefix) || (p.type !== 'number' && p.type !== 'integer')) continue;
    const r = settings.SettingRanges?.[k.slice(prefix.length)];
    if (!r) problems.push(`numeric setting ${k} has no range in SettingRanges`);
    else if (p.minimum !== r.min || p.maximum !== r.max || (p.type === 'integer') !== Boolean(r.integer)) {
      problems.push(`setting ${k}: package.json range ${p.minimum}..${p.maximum} (${p.type}) != SettingRanges ${r.min}..${r.max}${r.integer ? ' (integer)' : ''}`);
    }
  }
  const restricted = pkg.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [];
  for (const k of restricted) {
    if (!(k in props)) problems.push(`restrictedConfigurations names unknown setting ${k}`);
  }
  // The host relies on RestrictedSettings (settings.ts) matching the manifest, in both directions.
  for (const k of settings.RestrictedSettings ?? []) {
    if (!restricted.includes(prefix + k)) problems.push(`setting ${prefix + k} is in RestrictedSettings but not in restrictedConfigurations`);
  }
  for (const k of restricted) {
    if (k.startsWith(prefix) && !(settings.RestrictedSettings ?? []).includes(k.slice(prefix.length))) problems.push(`restrictedConfigurations names ${k}, which is not in RestrictedSettings`);
  }

  return { problems, counts: { commands: declared.size, views: declaredViews.size, settings: Object.keys(props).length, whens: whens.length } };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
  const { problems, counts } = checkManifest(pkg, await loadIdModules());
  if (problems.length) {
    console.error(`checkManifest: ${problems.length} problem(s) in package.json contributes:`);
    for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
  }
  console.log(`checkManifest: ${counts.commands} commands, ${counts.views} views, ${counts.settings} settings, ${counts.whens} when clauses OK`);
}
