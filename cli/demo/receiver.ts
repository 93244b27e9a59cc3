import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver on loopback for the demo's own run, used when the service accepts private
 * receivers (WEBHOOK_ALLOW_PRIVATE=true): it answers 204 to every delivery and counts them. It
 * lives only while the demo runs, so later deliveries to it fail (the webhook stays, to be PATCHed).
 */
export interface LoopbackReceiver {
  url: string;
  received(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<LoopbackReceiver> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cartero-demo/webhook`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
