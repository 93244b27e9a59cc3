import type { SMTPServer, SMTPServerDataStream } from 'smtp-server';

/**
 * The pieces the service's two SMTP listeners share (smtp/inbound.ts for reports,
 * smtp/submission/listener.ts for mail submission), each written once.
 */

/** An error smtp-server answers with this code and text (the text leads with its enhanced code). */
export function smtpReply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/**
 * Reads a DATA stream whole: `whole(raw)` once it ended within `maxBytes`, `tooLarge()` when it
 * ended past them (nothing past the limit is kept in memory). A stream cut short by the client
 * going away is destroyed by smtp-server and calls neither: nothing of it is handled.
 */
export function readData(stream: SMTPServerDataStream, maxBytes: number, whole: (raw: Buffer) => void, tooLarge: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
  });
  stream.once('error', () => {});
  stream.once('end', () => (stream.sizeExceeded || size > maxBytes ? tooLarge() : whole(Buffer.concat(chunks))));
}

/** Starts `server` listening; resolves with its port, rejects when it cannot listen. */
export async function listenSmtp(server: SMTPServer, port: number, host: string, what: string): Promise<number> {
  await new Promise<void>((ready, fail) => {
    const onError = (err: Error) => fail(err);
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      ready();
    });
  });
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error(`${what}: no TCP address`);
  return address.port;
}
