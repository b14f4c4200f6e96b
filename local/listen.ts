// Binding and closing the local stand-ins' HTTP servers, one way for all of them.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListeningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Binds `server` (port 0: a free one) and resolves once it listens; a bind error such as EADDRINUSE rejects. */
export async function listen(server: Server, host: string, port: number, opts: { graceMs?: number } = {}): Promise<ListeningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${bound}`, port: bound, close: () => closeServer(server, opts.graceMs) };
}

/** Stops accepting, then ends keep-alive sockets (SDK clients hold them open): idle ones at once, busy ones after graceMs. */
export function closeServer(server: Server, graceMs = 1000): Promise<void> {
  const closing = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  dropConnections(server, graceMs);
  return closing;
}

/** For servers closed by their owner's own close() (s3rver): end the sockets that would hold it open. */
export function dropConnections(server: Server, graceMs = 1000): void {
  server.closeIdleConnections();
  if (graceMs <= 0) server.closeAllConnections();
  else setTimeout(() => server.closeAllConnections(), graceMs).unref();
}
