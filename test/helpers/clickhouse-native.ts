import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/**
 * A minimal client of ClickHouse's native TCP protocol, written here so a test can knock on a
 * port the way `clickhouse-client` would, without depending on one: a ClientHello with a user and
 * password, then (when the server answers ServerHello) one query. It speaks an old protocol
 * revision on purpose: servers still accept it, and it keeps the packets to the fields listed
 * below (no addendum, no ProfileEvents, no chunking).
 *
 * Strings are a varint length then the bytes; integers in varints are unsigned LEB128.
 */

// DBMS_MIN_REVISION_WITH_QUOTA_KEY_IN_CLIENT_INFO: client info ends with the quota key; settings
// are name/value pairs ended by an empty name (an empty list is one empty string either way).
const REVISION = 54060;
const CLIENT = { name: 'cartero-test', major: 26, minor: 7 };

const CLIENT_HELLO = 0;
const CLIENT_QUERY = 1;
const CLIENT_DATA = 2;
const SERVER_HELLO = 0;
const SERVER_DATA = 1;
const SERVER_EXCEPTION = 2;
const SERVER_PROGRESS = 3;
const SERVER_END_OF_STREAM = 5;
const SERVER_PROFILE_INFO = 6;
const STAGE_COMPLETE = 2;

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}

function str(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([varint(bytes.length), bytes]);
}

const u8 = (n: number) => Buffer.from([n]);

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

export interface Credentials {
  user: string;
  password: string;
}

export function clientHello(c: Credentials, database = ''): Buffer {
  return Buffer.concat([varint(CLIENT_HELLO), str(CLIENT.name), varint(CLIENT.major), varint(CLIENT.minor), varint(REVISION), str(database), str(c.user), str(c.password)]);
}

function queryPacket(sql: string): Buffer {
  const clientInfo = Buffer.concat([
    u8(1), // query kind: initial
    str(''), // initial user
    str(''), // initial query id
    str('127.0.0.1:0'), // initial address
    u8(1), // interface: TCP
    str(''), // OS user
    str(''), // client hostname
    str(CLIENT.name),
    varint(CLIENT.major),
    varint(CLIENT.minor),
    varint(REVISION),
    str(''), // quota key
  ]);
  // The client always follows a query with its external tables, here none: one empty block.
  const emptyBlock = Buffer.concat([varint(CLIENT_DATA), str(''), varint(1), u8(0), varint(2), int32(-1), varint(0), varint(0), varint(0)]);
  return Buffer.concat([varint(CLIENT_QUERY), str(''), clientInfo, str(''), varint(STAGE_COMPLETE), varint(0), str(sql), emptyBlock]);
}

class NeedMore extends Error {}

/** Reads from a growing buffer; throws NeedMore when the bytes have not all arrived yet. */
class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new NeedMore();
      const byte = this.buf[this.pos++]!;
      n += (byte & 0x7f) * mul;
      if (!(byte & 0x80)) return n;
      mul *= 128;
    }
  }
  bytes(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new NeedMore();
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  str(): string {
    return this.bytes(this.varint()).toString('utf8');
  }
  int32(): number {
    return this.bytes(4).readInt32LE();
  }
  u8(): number {
    return this.bytes(1)[0]!;
  }
}

export type ServerPacket =
  | { type: 'hello'; name: string; major: number; minor: number; revision: number }
  | { type: 'exception'; code: number; name: string; message: string }
  | { type: 'progress' }
  | { type: 'profile-info' }
  | { type: 'data' }
  | { type: 'end-of-stream' }
  /** Not a native-protocol answer at all (e.g. an HTTP port's reply), or the connection closed. */
  | { type: 'other'; firstBytes: string }
  | { type: 'closed' };

function parseException(r: Reader): { code: number; name: string; message: string } {
  const code = r.int32();
  const name = r.str();
  const message = r.str();
  r.str(); // stack trace
  const nested = r.u8();
  if (nested) parseException(r);
  return { code, name, message };
}

function parsePacket(r: Reader, helloDone: boolean): ServerPacket {
  const type = r.varint();
  if (!helloDone) {
    if (type === SERVER_HELLO) {
      const name = r.str();
      const major = r.varint();
      const minor = r.varint();
      const revision = r.varint();
      r.str(); // time zone (every revision this client can ask for has one)
      return { type: 'hello', name, major, minor, revision };
    }
    if (type === SERVER_EXCEPTION) return { type: 'exception', ...parseException(r) };
    throw new Error(`not a ServerHello or Exception (packet type ${type})`);
  }
  switch (type) {
    case SERVER_EXCEPTION:
      return { type: 'exception', ...parseException(r) };
    case SERVER_PROGRESS:
      r.varint(); // rows
      r.varint(); // bytes
      r.varint(); // total rows
      return { type: 'progress' };
    case SERVER_PROFILE_INFO:
      r.varint();
      r.varint();
      r.varint();
      r.u8();
      r.varint();
      r.u8();
      return { type: 'profile-info' };
    case SERVER_END_OF_STREAM:
      return { type: 'end-of-stream' };
    case SERVER_DATA:
      // A statement like SYSTEM STOP LISTEN sends no data; a SELECT's blocks are not decoded.
      throw new Error('data packets are not decoded by this client');
    default:
      throw new Error(`unexpected packet type ${type}`);
  }
}

/** One native-protocol conversation: the packets the server sent, in order. */
class Conversation {
  private buf = Buffer.alloc(0);
  private ended = false;
  private waiters: Array<() => void> = [];
  constructor(readonly socket: Socket) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {
      this.ended = true;
      this.wake();
    });
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  async next(helloDone: boolean): Promise<ServerPacket> {
    for (;;) {
      if (this.buf.length > 0) {
        const r = new Reader(this.buf);
        try {
          const packet = parsePacket(r, helloDone);
          this.buf = this.buf.subarray(r.pos);
          return packet;
        } catch (err) {
          if (!(err instanceof NeedMore)) {
            return { type: 'other', firstBytes: this.buf.subarray(0, 200).toString('latin1') };
          }
          if (this.ended) return { type: 'other', firstBytes: this.buf.subarray(0, 200).toString('latin1') };
        }
      } else if (this.ended) {
        return { type: 'closed' };
      }
      await new Promise<void>((done) => this.waiters.push(done));
    }
  }
}

function open(port: number): Promise<Socket> {
  return new Promise((done, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(15_000, () => socket.destroy(new Error(`no answer from 127.0.0.1:${port} in 15 s`)));
    socket.once('connect', () => done(socket));
    socket.once('error', reject);
  });
}

export interface NativeAttempt {
  /** The server's answer to the ClientHello. */
  hello: ServerPacket;
  /** When the hello was accepted and a query given: the server's answer to it, up to its end. */
  query?: ServerPacket[];
}

/**
 * Sends a ClientHello as `credentials` to 127.0.0.1:`port` and, if the server answers ServerHello
 * and a query is given, runs it and collects the answer up to EndOfStream or an Exception.
 * Without a query the connection is half-closed after the hello.
 */
export async function nativeAttempt(port: number, credentials: Credentials, sql?: string): Promise<NativeAttempt> {
  const socket = await open(port);
  try {
    const talk = new Conversation(socket);
    socket.write(clientHello(credentials));
    // Without a query to follow, say so: a server of another protocol (an HTTP port waiting for
    // the end of a request line) then answers or hangs up at once instead of at the timeout.
    if (sql === undefined) socket.end();
    const hello = await talk.next(false);
    if (hello.type !== 'hello' || sql === undefined) return { hello };
    socket.write(queryPacket(sql));
    const query: ServerPacket[] = [];
    for (;;) {
      const packet = await talk.next(true);
      query.push(packet);
      if (packet.type !== 'progress' && packet.type !== 'profile-info') break;
    }
    return { hello, query };
  } finally {
    socket.destroy();
  }
}

/** Loopback TCP ports the process `pid` listens on, read from /proc (so none is missed). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is column 10.
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9]!)) continue;
      ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
