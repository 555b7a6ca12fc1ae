/**
 * Splits an exec reconciler's command line (the `reconcileLab.reconciler.command`
 * setting, the CLI's `--reconciler exec:…`) into argv, the way a
 * POSIX shell splits words (no expansion, no pipes: the program runs without
 * a shell). Single quotes keep everything literally; double quotes allow
 * `\"` and `\\`; a backslash outside quotes escapes the next character.
 * Throws on an unterminated quote.
 */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else cur += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) cur += line[++i];
      else cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote === '"' ? 'double' : 'single'} quote in the command line: ${line}`);
  if (inWord) out.push(cur);
  return out;
}
