import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

/**
 * Debian's Postfix as an application host's relay (issue 41): a private instance (its own
 * config, queue and log under a temp dir, no listening service: only pickup, the queue manager
 * and the SMTP client) whose `relayhost` is Cartero's submission port, with SASL (user = the
 * instance slug, password = an API key) over STARTTLS required. Mail goes in the way an
 * application hands it over: `sendmail -t` (postdrop into the queue). .ci/run installs postfix
 * and libsasl2-modules; starting Postfix takes root (it drops to the postfix user).
 */
export interface PostfixRelay {
  /** Hands a whole message (headers, blank line, body) to `sendmail -t`, envelope sender `from`. */
  sendmail(message: string, from: string): void;
  /** Postfix's log (maillog_file). */
  log(): string;
}

const POSTFIX = '/usr/sbin/postfix';
const SENDMAIL = '/usr/sbin/sendmail';

/** Why a Postfix relay cannot run here, or undefined when it can. */
export function postfixUnavailable(): string | undefined {
  if (!existsSync(POSTFIX) || !existsSync(SENDMAIL)) return 'Debian postfix is not installed (.ci/run installs it)';
  if (process.getuid?.() !== 0) return 'starting Postfix takes root';
  return undefined;
}

// Only what a relay needs; no chroot (Debian's default would want a copy of /etc in the queue).
const MASTER_CF = `pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
`;

export function startPostfixRelay(t: Test, opts: { port: number; user: string; password: string }): PostfixRelay {
  // Postfix's own processes run as the postfix user and must reach its data directory.
  const dir = mkdtempSync(join(tmpdir(), 'cartero-postfix-'));
  chmodSync(dir, 0o755);
  const conf = join(dir, 'conf');
  mkdirSync(conf);
  mkdirSync(join(dir, 'queue'));
  mkdirSync(join(dir, 'data'));
  const postfixUid = Number(execFileSync('id', ['-u', 'postfix'], { encoding: 'utf8' }).trim());
  chownSync(join(dir, 'data'), postfixUid, -1);
  const maillog = join(dir, 'maillog');
  // The password goes in a static map: no map file to build (postmap), and no ':' in an API key.
  writeFileSync(
    join(conf, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${join(dir, 'queue')}`,
      `data_directory = ${join(dir, 'data')}`,
      'mail_owner = postfix',
      'setgid_group = postdrop',
      'myhostname = app.test',
      'mydomain = app.test',
      'myorigin = app.test',
      'mydestination =',
      'alias_maps =',
      'alias_database =',
      'local_recipient_maps =',
      'inet_interfaces = loopback-only',
      'inet_protocols = ipv4',
      `relayhost = [127.0.0.1]:${opts.port}`,
      'smtp_dns_support_level = disabled',
      'smtp_sasl_auth_enable = yes',
      `smtp_sasl_password_maps = static:${opts.user}:${opts.password}`,
      'smtp_sasl_security_options = noanonymous',
      'smtp_sasl_tls_security_options = noanonymous',
      'smtp_tls_security_level = encrypt',
      `maillog_file = ${maillog}`,
      `maillog_file_prefixes = ${dir}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(conf, 'master.cf'), MASTER_CF);
  const postfix = (...args: string[]) => {
    const r = spawnSync(POSTFIX, ['-c', conf, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`postfix ${args.join(' ')}: ${r.status} ${r.stderr}${existsSync(maillog) ? readFileSync(maillog, 'utf8').slice(-2000) : ''}`);
  };
  // Stopped before its queue is removed.
  t.teardown(async () => {
    spawnSync(POSTFIX, ['-c', conf, 'stop'], { encoding: 'utf8' });
    await rm(dir, { recursive: true, force: true });
  });
  postfix('set-permissions');
  postfix('start');
  return {
    sendmail(message, from) {
      const r = spawnSync(SENDMAIL, ['-C', conf, '-t', '-f', from], { input: message, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`sendmail: ${r.status} ${r.stderr}`);
    },
    log: () => (existsSync(maillog) ? readFileSync(maillog, 'utf8') : ''),
  };
}
