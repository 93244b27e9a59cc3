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
