/**
 * A JSON object: not null, not an array. What a parsed manifest, a merge patch, a wire message or a setting value
 * must be before its fields are read. The guard narrows only the outer value; every field is still `unknown`.
 */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
