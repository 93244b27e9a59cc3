import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

/**
 * A bare SMTP client for the replies a library would hide or never provoke: a command the
 * tests write by hand, and each reply (a multi-line one as one string, its lines joined by \n),
 * in order. `starttls` upgrades the same connection; `cut` destroys it mid-command.
 */
export interface SmtpDialog {
  /** The next reply, as `<code> <text>` lines. */
  reply(): Promise<string>;
  /** Writes a command line and reads its reply. */
  command(line: string): Promise<string>;
  /** Writes raw bytes, reading nothing. */
  write(data: string | Buffer): void;
  /** STARTTLS on this connection (after its 220), trusting `ca`. */
  starttls(ca: Buffer): Promise<void>;
  cut(): void;
  close(): void;
}

export async function smtpDialog(port: number, opts: { implicitTls?: { ca: Buffer } } = {}): Promise<SmtpDialog> {
  let socket: Socket | TLSSocket;
  let buffer = '';
  const replies: string[] = [];
  const waiting: Array<(r: string) => void> = [];
  let failed: Error | undefined;
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    for (;;) {
      // A reply ends with a line `NNN text` (a space after the code; `NNN-` continues).
      const m = /^((?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n)/.exec(buffer);
      if (!m) break;
      buffer = buffer.slice(m[1]!.length);
      const reply = m[1]!.trimEnd().replace(/\r\n/g, '\n');
      const w = waiting.shift();
      if (w) w(reply);
      else replies.push(reply);
    }
  };
  const attach = (s: Socket | TLSSocket) => {
    socket = s;
    s.on('data', onData);
    s.on('error', (err) => (failed = err));
    s.on('close', () => {
      for (const w of waiting.splice(0)) w(`closed${failed ? `: ${failed.message}` : ''}`);
    });
  };
  await new Promise<void>((ready, fail) => {
    const s = opts.implicitTls
      ? tlsConnect({ host: '127.0.0.1', port, ca: opts.implicitTls.ca, servername: 'localhost' }, ready)
      : netConnect({ host: '127.0.0.1', port }, ready);
    s.once('error', fail);
    attach(s);
  });
  const reply = () => new Promise<string>((resolve) => (replies.length ? resolve(replies.shift()!) : socket.destroyed ? resolve('closed') : waiting.push(resolve)));
  const write = (data: string | Buffer) => void socket.write(data);
  const command = (line: string) => {
    write(line + '\r\n');
    return reply();
  };
  return {
    reply,
    write,
    command,
    async starttls(ca) {
      const r = await command('STARTTLS');
      if (!r.startsWith('220')) throw new Error(`STARTTLS refused: ${r}`);
      const plain = socket;
      plain.removeListener('data', onData);
      await new Promise<void>((ready, fail) => {
        const s = tlsConnect({ socket: plain, ca, servername: 'localhost' }, ready);
        s.once('error', fail);
        attach(s);
      });
    },
    cut: () => socket.destroy(),
    close: () => socket.end(),
  };
}
