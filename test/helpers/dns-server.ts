import dns2, { Packet } from 'dns2';

interface Teardown {
  teardown(fn: () => unknown): void;
}

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
  let server = create();
  const first = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = first.udp!.port;
  await server.close();
  let running = false;
  const start = async () => {
    server = create();
    await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
    running = true;
  };
  const stop = async () => {
    if (!running) return;
    running = false;
    await server.close();
  };
  await start();
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
