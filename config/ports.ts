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

/**
 * Reuse the port recorded for a data dir when it is still free, else take a new one. `taken`: the
 * ports already chosen by this process and not yet bound (each is added to it). A probed port is
 * released at once, so two probes could return the same one; the dyno that bound it first then
 * made the other fail to start (EADDRINUSE: the web's internal port once met the worker's inbound
 * SMTP port in CI).
 */
export async function preferredPort(recorded: number | undefined, taken: Set<number> = new Set()): Promise<number> {
  let port = recorded && !taken.has(recorded) && (await portIsFree(recorded)) ? recorded : await freePort();
  for (let tries = 0; taken.has(port) && tries < 20; tries++) port = await freePort();
  if (taken.has(port)) throw new Error(`no free loopback port apart from ${[...taken].join(', ')}`);
  taken.add(port);
  return port;
}
