import type { KubeObject } from '../k8s/objects.ts';
import { keyFor } from '../k8s/keys.ts';
import type { IndexerReader } from './interfaces.ts';
import { NAMESPACE_INDEX } from './indexer.ts';
import { everything, parseLabelSelector, type LabelSelector } from './labelSelector.ts';

/** A selector as a string (`a=b,c!=d,e,!f,g in (x,y)`) or a parsed {@link LabelSelector}. */
export type SelectorInput = string | LabelSelector | undefined;

function toSelector(s: SelectorInput): LabelSelector {
  if (s === undefined) return everything;
  return typeof s === 'string' ? parseLabelSelector(s) : s;
}

function filter<T extends KubeObject>(objs: T[], sel: LabelSelector): T[] {
  return sel.empty ? objs : objs.filter((o) => sel.matches(o.metadata.labels));
}

/** Reads of one namespace (client-go `NamespaceLister`). */
export interface NamespaceLister<T extends KubeObject> {
  get(name: string): T | undefined;
  list(selector?: SelectorInput): T[];
}

/**
 * Typed reads over an informer's indexer (client-go generated listers).
 * Never a network call; results may be stale. Callers MUST NOT mutate the
 * returned objects (they are the cache's). A bad selector string throws
 * {@link LabelSelectorError}.
 */
export class Lister<T extends KubeObject = KubeObject> {
  private readonly indexer: IndexerReader<T>;

  constructor(indexer: IndexerReader<T>) {
    this.indexer = indexer;
  }

  /** Every cached object matching `selector`, across namespaces. */
  list(selector?: SelectorInput): T[] {
    return filter(this.indexer.list(), toSelector(selector));
  }

  /** The cached object `namespace/name` (pass `undefined` for a cluster-scoped object). */
  get(namespace: string | undefined, name: string): T | undefined {
    return this.indexer.getByKey(keyFor(namespace, name));
  }

  /** Reads restricted to `namespace`, served by the namespace index. */
  namespace(namespace: string): NamespaceLister<T> {
    return {
      get: (name) => this.indexer.getByKey(keyFor(namespace, name)),
      list: (selector) => filter(this.indexer.byIndex(NAMESPACE_INDEX, namespace), toSelector(selector)),
    };
  }
}
