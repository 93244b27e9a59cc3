import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A JSON API call's answer: its status, headers and parsed body (undefined when the body is empty). */
export interface JsonReply {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * One call to the web app as a client makes it: an object body is sent as JSON, a string as it
 * is (to send malformed JSON), with Content-Type application/json whenever there is a body.
 */
export async function jsonCall(url: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<JsonReply> {
  const raw = typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(url + path, {
    method,
    headers: { ...headers, ...(raw === undefined ? {} : { 'content-type': 'application/json' }) },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** A raw answer: status, headers (lower-case names) and the body as text. */
export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Kept-alive loopback connections for httpCall, like fetch's own pool. */
const httpAgent = new Agent({ keepAlive: true });

/**
 * The request fetch would send for `url`, made with node:http: the URL normalized the same way
 * (`..` segments resolved, the path and query otherwise sent as written), the caller's headers
 * and the Accept header fetch sends (any type), a string body with its Content-Length; redirects
 * are not followed, as with fetch's `redirect: 'manual'`; no encoding is asked for, so the body
 * arrives as the server wrote it. For files that make thousands of requests: fetch (undici)
 * costs several times the CPU of node:http per request, in the test's own process, which on two
 * cores is time taken from the server under test. Rejects, as fetch does, when the connection fails.
 */
export function httpCall(url: string, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<HttpReply> {
  const target = new URL(url);
  const body = init.body === undefined ? undefined : Buffer.from(init.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent: httpAgent,
        host: target.hostname,
        port: target.port,
        method: init.method,
        path: target.pathname + target.search,
        headers: { accept: '*/*', ...init.headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
