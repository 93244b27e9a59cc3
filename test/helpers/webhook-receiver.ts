import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Teardown } from './wait.js';

/** One request the receiver got. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Parsed body: {type, timestamp, data}. */
  event: any;
  at: number;
  /** The status the receiver answered (undefined while held or when it never answered). */
  answered?: number;
  /** When the exchange ended (answered, or the sender gave up on it). */
  closedAt?: number;
}

/**
 * How a path answers: a status (and headers; after delayMs) with a body (text or raw bytes), or
 * 'hang' (never answer until released). `trickle`: after the headers, one chunk every `everyMs`
 * for `forMs`, then the end (a receiver that answers slowly, byte by byte).
 */
export type Answer =
  | { status: number; headers?: Record<string, string>; body?: string | Buffer; delayMs?: number; trickle?: { chunk: string; everyMs: number; forMs: number } }
  | 'hang';

/**
 * A real webhook receiver on loopback: every request is recorded; each path answers as its
 * behaviour says (default 200). Verification is left to the official `standardwebhooks`
 * library (`verifies`), never a hand-written check.
 */
export async function startReceiver(t: Teardown) {
  const received: Received[] = [];
  const behaviours = new Map<string, (r: Received, n: number) => Answer>();
  const held = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const r: Received = { path, headers: req.headers as Record<string, string>, body, event: safeJson(body), at: Date.now() };
      received.push(r);
      res.on('close', () => (r.closedAt = Date.now()));
      const n = received.filter((x) => x.path === path).length;
      const answer: Answer = (behaviours.get(path) ?? ((): Answer => ({ status: 200 })))(r, n);
      if (answer === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      const reply = () => {
        r.answered = answer.status;
        res.writeHead(answer.status, answer.headers ?? {});
        const trickle = answer.trickle;
        if (!trickle) return void res.end(answer.body ?? 'ok');
        res.flushHeaders();
        const until = Date.now() + trickle.forMs;
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer);
          if (Date.now() >= until) {
            clearInterval(timer);
            return void res.end();
          }
          res.write(trickle.chunk);
        }, trickle.everyMs);
        res.on('close', () => clearInterval(timer));
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.keepAliveTimeout = 1000;
  t.teardown(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    url: (path: string) => base + path,
    on(path: string, behaviour: (r: Received, n: number) => Answer) {
      behaviours.set(path, behaviour);
    },
    at: (path: string) => received.filter((r) => r.path === path),
    /** Drop every held request's connection (as a receiver restart would). */
    releaseHeld() {
      for (const res of held) res.destroy();
    },
  };
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Whether the official library accepts this delivery with this secret. */
export function verifies(secret: string, r: Received): boolean {
  try {
    new Webhook(secret).verify(r.body, {
      'webhook-id': r.headers['webhook-id']!,
      'webhook-timestamp': r.headers['webhook-timestamp']!,
      'webhook-signature': r.headers['webhook-signature']!,
    });
    return true;
  } catch {
    return false;
  }
}
