import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A loopback TCP proxy for tests that break connections on purpose: every
 * connection to `127.0.0.1:port` is piped byte for byte to the target
 * (TLS passes through untouched, so the apiserver's certificate still
 * matches 127.0.0.1). {@link resetAll} ends every open connection with a TCP
 * RST (ECONNRESET on the client), in the middle of whatever it was carrying.
 *
 * Listens on loopback only. Owned by the test: {@link close} resets every
 * connection and stops listening.
 */
export class TcpProxy {
  readonly port: number;
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private connectionCount = 0;

  private constructor(server: Server, port: number) {
    this.server = server;
    this.port = port;
  }

  /** Starts a proxy to `targetHost:targetPort` on a free loopback port, or on `listenPort` (a proxy started again on the port of one closed). */
  static async start(targetHost: string, targetPort: number, listenPort = 0): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      const pair = { client, upstream };
      proxy!.pairs.add(pair);
      proxy!.connectionCount++;
      const drop = () => {
        proxy!.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop);
      upstream.on('error', drop);
      client.on('close', drop);
      upstream.on('close', drop);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((res, rej) => {
      server.once('error', rej);
      server.listen(listenPort, '127.0.0.1', () => res());
    });
    proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  /** Connections accepted so far. */
  get connections(): number {
    return this.connectionCount;
  }

  /** Connections open now. */
  get open(): number {
    return this.pairs.size;
  }

  /** Ends every open connection with a TCP reset (the client sees ECONNRESET); new connections are still accepted. */
  resetAll(): number {
    const n = this.pairs.size;
    for (const pair of [...this.pairs]) {
      this.pairs.delete(pair);
      pair.upstream.destroy();
      pair.client.resetAndDestroy();
    }
    return n;
  }

  /** Resets every connection and stops listening. */
  async close(): Promise<void> {
    this.resetAll();
    await new Promise<void>((res) => this.server.close(() => res()));
  }
}

/**
 * A copy of the kubeconfig at `path` whose server is `https://127.0.0.1:<port>`
 * (same credentials and CA), in a private temp dir. Returns its path and a
 * cleanup function.
 */
export function kubeconfigThrough(path: string, port: number): { path: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-proxy-'));
  const text = readFileSync(path, 'utf8').replace(/server: https:\/\/127\.0\.0\.1:\d+/, `server: https://127.0.0.1:${port}`);
  const file = join(dir, 'kubeconfig');
  writeFileSync(file, text, { mode: 0o600 });
  return { path: file, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
