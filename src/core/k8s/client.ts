import type { GroupVersionResource, KubeList, KubeObject, ResourceInfo } from './objects.ts';

/** Options common to writes. `dryRun` sends `dryRun=All`: the server validates and answers, nothing persists. */
export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
  /**
   * Called with the server's warnings about this request (HTTP `Warning` headers with code 299, as client-go reads
   * them: `unknown field "spec.x"`, a deprecated API…), once, before the call settles; not called when there are none.
   */
  onWarnings?: (warnings: readonly string[]) => void;
}

export type PatchType = 'json' | 'merge' | 'strategic';

/** One JSON Patch (RFC 6902) operation. */
export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/**
 * A dynamic client over any resource. Errors are {@link ApiError}s carrying
 * the HTTP status and the server's reason, so callers can tell 404 / 409 / 410
 * apart. Reads always go to the server (never a cache).
 */
export interface KubeClient {
  get(gvr: GroupVersionResource, namespace: string | undefined, name: string, signal?: AbortSignal): Promise<KubeObject>;
  list(gvr: GroupVersionResource, namespace: string | undefined, options?: { labelSelector?: string; fieldSelector?: string; signal?: AbortSignal }): Promise<KubeList>;
  create(gvr: GroupVersionResource, obj: KubeObject, options?: WriteOptions): Promise<KubeObject>;
  update(gvr: GroupVersionResource, obj: KubeObject, options?: WriteOptions): Promise<KubeObject>;
  updateStatus(gvr: GroupVersionResource, obj: KubeObject, options?: WriteOptions): Promise<KubeObject>;
  patch(gvr: GroupVersionResource, namespace: string | undefined, name: string, type: PatchType, patch: unknown, options?: WriteOptions & { subresource?: string }): Promise<KubeObject>;
  patchStatus(gvr: GroupVersionResource, namespace: string | undefined, name: string, type: PatchType, patch: unknown, options?: WriteOptions): Promise<KubeObject>;
  /** Server-side apply (application/apply-patch+yaml); `force` takes over conflicting fields. */
  apply(gvr: GroupVersionResource, obj: KubeObject, options: WriteOptions & { fieldManager: string; force?: boolean }): Promise<KubeObject>;
  /** Resolves with the server's answer (the object with deletionTimestamp when finalizers hold it, or a Status). */
  delete(gvr: GroupVersionResource, namespace: string | undefined, name: string, options?: WriteOptions & { preconditions?: { resourceVersion?: string; uid?: string } }): Promise<KubeObject | undefined>;
  /** Discovery: every listable resource the server serves (preferred version per group first). */
  discover(signal?: AbortSignal): Promise<ResourceInfo[]>;
}

/** A failed API call. `code` is the HTTP status (0 when the server was not reached). */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: unknown;
  constructor(code: number, reason: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.code === 409;
export const isGone = (e: unknown): boolean => (e instanceof ApiError && e.code === 410) || (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 410);
export const isAlreadyExists = (e: unknown): boolean => e instanceof ApiError && e.code === 409 && e.reason === 'AlreadyExists';
