import { createServer } from 'node:net';

/** Whether a loopback TCP port can be bound right now. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port the OS says is free now (bind to 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Reuse the port recorded for a data dir when it is still free, else take a new one. */
export async function preferredPort(recorded: number | undefined): Promise<number> {
  if (recorded && (await portIsFree(recorded))) return recorded;
  return freePort();
}
