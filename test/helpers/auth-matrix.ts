/**
 * Raw HTTP captures for the authentication tests: the body as bytes-on-the-wire text and the full
 * header set, so "identical apart from trace_id / X-Request-Id / Date" can be compared exactly.
 */
export interface RawResponse {
  status: number;
  /** Every response header, lower-cased names, as fetch exposes them. */
  headers: Record<string, string>;
  /** The body exactly as received. */
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: any;
}

export async function rawCall(url: string, headers: Record<string, string> = {}, init: { method?: string; body?: unknown } = {}): Promise<RawResponse> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...headers, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    redirect: 'manual',
  });
  const text = await res.text();
  const all: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    all[name] = value;
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: all, text, body };
}

/** Headers that legitimately differ between two otherwise identical responses. */
const VOLATILE_HEADERS = new Set(['x-request-id', 'date']);

/**
 * The part of a response that must not vary with the cause of a refusal: status, the raw body with
 * its trace_id value blanked, and every header except X-Request-Id and Date.
 */
export function canonical(r: RawResponse): { status: number; text: string; headers: Record<string, string> } {
  const traceId: unknown = r.body?.trace_id;
  const text = typeof traceId === 'string' && traceId !== '' ? r.text.split(JSON.stringify(traceId)).join('"<trace_id>"') : r.text;
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([name]) => !VOLATILE_HEADERS.has(name)));
  return { status: r.status, text, headers };
}
