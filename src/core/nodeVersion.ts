/**
 * The oldest Node the tool runs on: `@kubernetes/client-node` 2.x uses undici 8, which needs Node >= 22.19 (on an
 * older Node it fails while loading, with errors such as "Cannot read properties of undefined (reading 'bind')").
 * The extension and the CLI check this before loading anything that needs the Kubernetes client.
 */
export const MIN_NODE: readonly [number, number] = [22, 19];

/** True when `version` ("22.19.0", as `process.versions.node`) is at least {@link MIN_NODE}. */
export function nodeIsSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}
