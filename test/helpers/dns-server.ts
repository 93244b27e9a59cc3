import dns2, { Packet } from 'dns2';
import type { Teardown } from './wait.js';

/**
 * A real DNS server on loopback (dns2: DNS over UDP and TCP), serving a zone the test edits:
 * TXT and MX records by name. A name with no record at all answers NXDOMAIN, a name with records
 * of other types answers NOERROR without answers (ENODATA to node's resolver), as a real
 * authoritative server would. stop() closes both sockets: a resolver then gets no answer
 * (ECONNREFUSED on loopback), which is what "the resolver does not answer" looks like.
 */
export interface TestDnsServer {
  /** `127.0.0.1:PORT`, for DNS_SERVERS and node's Resolver#setServers. */
  address: string;
  port: number;
  txt(name: string, ...values: string[]): void;
  mx(name: string, exchange: string, priority?: number): void;
  remove(name: string, type?: 'TXT' | 'MX'): void;
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

export async function startTestDnsServer(t: Teardown): Promise<TestDnsServer> {
  const zone = new Map<string, { txt: string[]; mx: Array<{ exchange: string; priority: number }> }>();
  const entry = (name: string) => {
    const key = name.toLowerCase().replace(/\.$/, '');
    let e = zone.get(key);
    if (!e) zone.set(key, (e = { txt: [], mx: [] }));
    return e;
  };
  const handle = (request: Packet, send: (response: Packet) => Promise<unknown>) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    const e = question ? zone.get(question.name.toLowerCase().replace(/\.$/, '')) : undefined;
    if (!question || !e || (!e.txt.length && !e.mx.length)) {
      response.header.rcode = 3; // NXDOMAIN (dns2 has Packet.RCODE, its types do not)
    } else if (question.type === Packet.TYPE.TXT) {
      // A TXT value over 255 bytes goes as several character strings, as zone files split it.
      for (const value of e.txt) {
        const chunks = value.match(/[\s\S]{1,255}/g) ?? [''];
        response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: chunks } as never);
      }
    } else if (question.type === Packet.TYPE.MX) {
      for (const m of e.mx) response.answers.push({ name: question.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 60, ...m } as never);
    }
    void send(response);
  };
  // A closed dns2 server does not listen again: each start makes a new one on the same port.
  const create = () => {
    const s = dns2.createServer({ udp: true, tcp: true, handle: handle as never });
    s.on('error', () => {});
    return s;
  };
  let server: ReturnType<typeof create> | undefined;
  let running = false;
  /**
   * Listens on `port` over UDP and TCP, or fails with the socket's error. dns2's listen() waits
   * for 'listening' only: a port taken over TCP (free over UDP when it was picked) hung the test
   * until tap's timeout, silently, once in CI.
   */
  const listenOn = async (port: number) => {
    server = create();
    const s = server;
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => {
        void s.close(); // the other socket, if it listened (not awaited: one that never listened never says closed)
        reject(err);
      };
      s.once('error', failed);
      void s.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } }).then(() => {
        s.off('error', failed);
        resolve();
      });
    });
    running = true;
  };
  // A port free over UDP (the system's pick), tried over both; another pick if TCP has it taken.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    const probe = create();
    port = (await probe.listen({ udp: { port: 0, address: '127.0.0.1' } })).udp!.port;
    await probe.close();
    try {
      await listenOn(port);
      break;
    } catch (err) {
      if (attempt >= 20 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  const start = () => listenOn(port);
  const stop = async () => {
    if (!running) return;
    running = false;
    await server?.close();
  };
  t.teardown(stop);
  return {
    address: `127.0.0.1:${port}`,
    port,
    txt: (name, ...values) => void entry(name).txt.push(...values),
    mx: (name, exchange, priority = 10) => void entry(name).mx.push({ exchange, priority }),
    remove(name, type) {
      const e = entry(name);
      if (!type || type === 'TXT') e.txt = [];
      if (!type || type === 'MX') e.mx = [];
    },
    stop,
    start,
  };
}
