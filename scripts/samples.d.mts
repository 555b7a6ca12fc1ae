// Types of scripts/samples.mjs for the TypeScript tests that import it.
import type { KubeTransport } from '../src/core/k8s/transport.ts';
export declare const SAMPLES_FIELD_MANAGER: string;
export declare function loadDocuments(file: string): object[];
export declare function applyDocuments(t: KubeTransport, docs: readonly object[], o?: { log?: (line: string) => void }): Promise<void>;
