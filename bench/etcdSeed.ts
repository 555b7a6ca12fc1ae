// Fast creation of many benchmark objects for a control plane the benchmark started itself: the objects are written
// straight into its etcd (through etcd's JSON gateway, many puts per transaction), in the form kube-apiserver stores
// them, and kube-apiserver picks them up through its watch of etcd like any other write. Creating 100,000 objects
// through the API (admission, validation, managed fields, one etcd write each) takes many minutes on two shared
// cores; this takes seconds. Only the way the objects get there differs: every read the benchmarks measure (LIST,
// WATCH) still goes through the real kube-apiserver.
import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';

export interface EtcdAccess {
  /** etcd's client URL (https). */
  url: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** etcd's default limit of operations in one transaction (--max-txn-ops) is 128. */
const TXN_OPS = 100;

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

/** A small client of etcd's v3 JSON gateway (range and transactional put), with client-certificate TLS. */
export class EtcdSeeder {
  private readonly agent: Agent;
  private readonly url: URL;

  constructor(access: EtcdAccess) {
    this.url = new URL(access.url);
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: readFileSync(access.caFile),
      cert: readFileSync(access.certFile),
      key: readFileSync(access.keyFile),
    });
  }

  /** The value stored at `key`, or undefined when there is none. */
  async get(key: string): Promise<string | undefined> {
    const r = await this.call<{ kvs?: Array<{ value: string }> }>('/v3/kv/range', { key: b64(key) });
    const v = r.kvs?.[0]?.value;
    return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
  }

  /**
   * Writes every [key, value] pair, `perTxn` (default TXN_OPS) per transaction, `inFlight` transactions at a time.
   * The puts of one transaction share one etcd revision, so their watch events share one resourceVersion, which
   * kube-apiserver never produces itself: for updates that watchers are to see, write one put per transaction.
   */
  async putAll(entries: Iterable<[string, string]>, inFlight = 4, perTxn = TXN_OPS): Promise<void> {
    const it = entries[Symbol.iterator]();
    let failed: unknown;
    const worker = async () => {
      for (;;) {
        if (failed) return;
        const ops: unknown[] = [];
        while (ops.length < perTxn) {
          const r = it.next();
          if (r.done) break;
          ops.push({ requestPut: { key: b64(r.value[0]), value: b64(r.value[1]) } });
        }
        if (!ops.length) return;
        try {
          await this.call('/v3/kv/txn', { success: ops });
        } catch (e) {
          failed ??= e;
        }
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    if (failed) throw failed;
  }

  dispose(): void {
    this.agent.destroy();
  }

  private call<T>(path: string, body: unknown): Promise<T> {
    const data = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.url),
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) reject(new Error(`etcd ${path}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
            else resolve(JSON.parse(text) as T);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  }
}
