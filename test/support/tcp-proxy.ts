import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of one target, for outages a test can switch on
 * and off without touching the real server: `cut()` resets every connection and every
 * new one (as a database that went away), `hang()` accepts connections and never
 * answers (as a black-holed network), `restore()` forwards again.
 */
export interface TcpProxy {
  /** The port the proxy listens on. */
  readonly port: number;
  /** Resets every open connection and each new one until `restore()`. */
  cut(): void;
  /** Holds new connections silent until `restore()`, which resets them. */
  hang(): void;
  /** Forwards again; connections held by `hang()` are reset. */
  restore(): void;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

type Mode = 'forward' | 'cut' | 'hang';

/** Starts a proxy to `target` on a free port. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: Mode = 'forward';
  const open = new Set<Socket>();
  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => {});
  };
  const dropAll = () => {
    for (const s of open) s.resetAndDestroy();
  };
  const server = createServer((client) => {
    track(client);
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'hang') return;
    const upstream = createConnection(target);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    cut() {
      mode = 'cut';
      dropAll();
    },
    hang() {
      mode = 'hang';
      dropAll();
    },
    restore() {
      if (mode === 'hang') dropAll();
      mode = 'forward';
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        dropAll();
      });
    },
  };
}
