import { controllerBuilder, type ControllerBuilder } from '../../../../src/core/controller/builder.ts';
import type { ControllerOptions, ReconcileContextBase } from '../../../../src/core/controller/controller.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../../../src/core/controller/reconcile.ts';
import { createJournal, type Journal } from '../../../../src/core/journal/journal.ts';
import type { KubeClient } from '../../../../src/core/k8s/client.ts';
import { FakeClock, flushMicrotasks } from '../../../fakes/fakeClock.ts';
import { FakeInformer } from './fakeInformer.ts';

/** A client whose every call fails loudly: controller unit tests never talk to a server. */
const noServerClient: KubeClient = new Proxy({} as KubeClient, {
  get: (_t, prop) => () => Promise.reject(new Error(`KubeClient.${String(prop)} is not available in controller unit tests`)),
});

export type ReconcileImpl = (req: Request, ctx: ReconcileContext, base: ReconcileContextBase) => Promise<Result> | Result;

export interface Harness {
  clock: FakeClock;
  journal: Journal;
  widgets: FakeInformer;
  /** Every reconcile call's key, in call order. */
  calls: string[];
  /** Contexts given to reconciles, in call order. */
  contexts: ReconcileContext[];
  builder: ControllerBuilder;
  /** Records calls and delegates to the current behaviour (see setImpl). */
  reconciler: Reconciler;
  /** Replaces the reconcile behaviour. */
  setImpl(impl: ReconcileImpl): void;
}

export function harness(options: Partial<ControllerOptions> = {}): Harness {
  const clock = new FakeClock();
  const journal = createJournal({ clock, delivery: 'sync' });
  const widgets = new FakeInformer({ kind: 'Widget', resource: 'widgets' });
  const calls: string[] = [];
  const contexts: ReconcileContext[] = [];
  let impl: ReconcileImpl = () => ({});
  const bases = new WeakMap<ReconcileContext, ReconcileContextBase>();
  const builder = controllerBuilder({
    name: 'widgets',
    clock,
    journal,
    contextFactory: (_req, base) => {
      const ctx: ReconcileContext = {
        client: noServerClient,
        cache: base.cache,
        log: base.log,
        recorder: { event: () => {} },
        primary: base.primary,
        dryRun: false,
        signal: base.signal,
      };
      bases.set(ctx, base);
      return ctx;
    },
    ...options,
  });
  return {
    clock,
    journal,
    widgets,
    calls,
    contexts,
    builder,
    reconciler: {
      name: 'test-reconciler',
      async reconcile(req, ctx) {
        calls.push(req.key);
        contexts.push(ctx);
        return impl(req, ctx, bases.get(ctx)!);
      },
    },
    setImpl(i) {
      impl = i;
    },
  };
}

/** Lets the async workers run until they block again. */
export async function settle(): Promise<void> {
  await flushMicrotasks(60);
}

/** A promise with its resolvers, to hold a reconcile open. */
export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export const widget = (name: string, spec: unknown = { size: 1 }, namespace = 'ns') => ({ metadata: { name, namespace }, spec });
