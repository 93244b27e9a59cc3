import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import { readServices } from '../../config/services-file.js';

/** A step of the demo that could not be done: the CLI prints its message and exits 1. */
export class DemoError extends Error {}

/** Where the running service is: its public URL and the mailbox simulator's directory. */
export interface DemoService {
  /** The base URL the API answers at (no trailing slash). */
  base: string;
  /** $DATA_DIR/mailbox: the mailbox simulator's .eml files (`npm start` without SMTP_URL). */
  mailboxDir: string;
}

/**
 * The service `npm start` runs with this DATA_DIR: the web URL it recorded in services.json (as
 * the CLI finds its database there), else PORT on localhost. It must answer: the demo is a client.
 */
export async function findService(config: Config): Promise<DemoService> {
  const recorded = readServices(config.dataDir).web?.url;
  const base = (recorded ?? `http://localhost:${config.port}`).replace(/\/+$/, '');
  try {
    const res = await fetch(`${base}/v1/openapi.json`, { signal: AbortSignal.timeout(5_000) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`answered ${res.status}`);
  } catch (err) {
    throw new DemoError(
      `no Cartero service answers at ${base} (${(err as Error).message}): start it first with \`npm start\` (the same DATA_DIR: ${config.dataDir})`,
    );
  }
  return { base, mailboxDir: join(config.dataDir, 'mailbox') };
}

export interface Answer {
  status: number;
  body: any;
}

/** The API with the demo's key: JSON in, JSON out. */
export class DemoApi {
  constructor(
    readonly base: string,
    readonly key: string,
    readonly slug: string,
  ) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.key}`, 'x-instance-slug': this.slug, ...extra };
  }

  async call(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(this.base + path, {
      method,
      headers: this.headers(body === undefined ? extra : { 'content-type': 'application/json', ...extra }),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON (an export): the text as it came.
    }
    return { status: res.status, body: parsed };
  }

  /** The call, which must answer one of `ok`; else the demo stops saying what the API answered. */
  async expect(method: string, path: string, body: unknown, ok: number[], extra: Record<string, string> = {}): Promise<any> {
    const answer = await this.call(method, path, body, extra);
    if (!ok.includes(answer.status)) {
      throw new DemoError(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
    }
    return answer.body;
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value (not undefined) or `ms` pass; undefined then. */
export async function waitUntil<T>(ms: number, probe: () => Promise<T | undefined>, every = 300): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) return undefined;
    await sleep(every);
  }
}
