/** "Did you mean" helpers: names close to a typo. */

/** Levenshtein distance of `a` and `b` (names are short: the plain O(n·m) table). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The names among `candidates` a typo of `name` most likely meant: at most three, closest first, within an edit
 * distance of 2 (3 for names of 12 characters or more), or that start with it or it starts with. Empty when none is
 * close. Case-insensitive.
 */
export function closestNames(name: string, candidates: readonly string[]): string[] {
  const limit = name.length >= 12 ? 3 : 2;
  return candidates
    .filter((c) => c !== name)
    .map((c) => {
      // Case does not count: "RequeueAfter" is as close to "requeueAfterMs" as "requeueAfter" is.
      const [x, y] = [name.toLowerCase(), c.toLowerCase()];
      const edits = distance(x, y);
      return { c, edits, d: y.startsWith(x) || x.startsWith(y) ? Math.min(1, edits) : edits };
    })
    .filter((x) => x.d <= limit)
    .sort((x, y) => x.d - y.d || x.edits - y.edits || x.c.localeCompare(y.c))
    .slice(0, 3)
    .map((x) => x.c);
}

/**
 * When `fields` has names outside `known`: how many (`count`, each one problem of a message that counts them) and one
 * sentence naming them (each with the known field it most likely meant) and then `lead` with the known fields
 * ("… ; the output fields are a, b, c"). Undefined when every field is known.
 */
export function unknownFields(fields: readonly string[], known: readonly string[], lead: string): { count: number; message: string } | undefined {
  const unknown = fields.filter((f) => !known.includes(f));
  if (!unknown.length) return undefined;
  const named = unknown.map((f) => {
    const close = closestNames(f, known);
    return `"${f}"${close.length ? ` (did you mean "${close[0]}"?)` : ''}`;
  });
  return { count: unknown.length, message: `unknown field${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; ${lead} ${known.join(', ')}` };
}

/** {@link unknownFields}' sentence alone. */
export function unknownFieldsMessage(fields: readonly string[], known: readonly string[], lead: string): string | undefined {
  return unknownFields(fields, known, lead)?.message;
}
