// A TCP proxy on 127.0.0.1:0 in front of a real server (PostgreSQL in the reliability tests), that can cut every
// connection passing through it at once, as a network blip, a failover or a proxy restart does. New connections
// are accepted again right after a cut.
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Destroys every open connection (both sides); returns how many were cut. */
  cut(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<{ client: Socket; upstream: Socket }>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream };
    open.add(pair);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get accepted() {
      return accepted;
    },
    cut() {
      const n = open.size;
      for (const { client, upstream } of [...open]) {
        // A reset, not a polite FIN: what a dropped network path looks like to both ends.
        client.resetAndDestroy();
        upstream.resetAndDestroy();
      }
      open.clear();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, upstream } of open) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
