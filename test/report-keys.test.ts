import t from 'tap';
import { reportKeys, verifyReportTag } from '../domain/bounces/report-keys.js';
import { checkReportTag, reportTag, type ReportKeys } from '../domain/bounces/report-tag.js';
import { acceptSend } from '../domain/mail/accept.js';
import { newId } from '../domain/mail/ids.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { createPool } from '../sql/pool.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { childEnv, cliRunner, oneJsonObject } from './helpers/spawn.js';

/**
 * The report tag that proves an inbound report saw its mail (domain/bounces/report-tag.ts), its
 * versioned keys in Postgres and their rotation through the CLI, and the ids it protects: mail
 * ids that cannot be derived from one another.
 */

const dbs = await testDatabases(t, 'reportkeys');

const keys = (entries: Array<[number, string]>): ReportKeys => ({
  current: { version: entries.at(-1)![0], secret: entries.at(-1)![1] },
  byVersion: new Map(entries),
  taggedSince: new Date(0),
});

t.test('a tag verifies for its mail and key only, in any case', async (t) => {
  const ring = keys([[1, 'first'], [2, 'second']]);
  const id = newId();
  const tag = reportTag(ring.current, id);
  t.match(tag, /^2[0-9a-f]{20}$/, 'the version, then 80 bits of HMAC in hex');
  t.equal(checkReportTag(ring, id, tag), 'valid');
  t.equal(checkReportTag(ring, id.toLowerCase(), tag.toUpperCase()), 'valid', 'MTAs may change the case of a local part');
  t.equal(checkReportTag(ring, newId(), tag), 'invalid', "another mail's id");
  t.equal(checkReportTag(ring, id, reportTag({ version: 2, secret: 'guess' }, id)), 'invalid', 'made with another key');
  t.equal(checkReportTag(ring, id, reportTag({ version: 1, secret: 'first' }, id)), 'valid', 'an older version still verifies');
  t.equal(checkReportTag(ring, id, reportTag({ version: 7, secret: 'x' }, id)), 'unknown_version');
  for (const bad of ['', '2', `2${'0'.repeat(19)}`, `${tag}0`, `x${tag.slice(1)}`, `2${'g'.repeat(20)}`]) {
    t.not(checkReportTag(ring, id, bad), 'valid', `malformed ${JSON.stringify(bad)}`);
  }
});

t.test('keys: version 1 made once by concurrent first callers; rotation by the CLI keeps old tags valid', async (t) => {
  // Separate pools: separate caches, like separate dynos.
  const pools = Array.from({ length: 4 }, () => createPool(dbs.databaseUrl, { max: 1 }));
  t.teardown(() => Promise.all(pools.map((p) => p.end())));
  const loaded = await Promise.all(pools.map((p) => reportKeys(p)));
  t.same(new Set(loaded.map((k) => k.current.secret)).size, 1, 'every process agrees on the key');
  t.equal(loaded[0]!.current.version, 1);
  t.ok(loaded[0]!.taggedSince.getTime() <= Date.now(), 'the untagged era ended when migration 010 ran');

  const id = newId();
  const oldTag = reportTag(loaded[0]!.current, id);
  const cli = cliRunner(t, childEnv({ DATABASE_URL: dbs.databaseUrl }, ['CLICKHOUSE_URL', 'PORT', 'NODE_OPTIONS']));
  const rotated = oneJsonObject(await cli('report-key', 'rotate'));
  t.equal(rotated.version, 2, 'the CLI prints the new version');
  t.type(rotated.created_at, 'string');

  const fresh = createPool(dbs.databaseUrl, { max: 1 });
  t.teardown(() => fresh.end());
  const now = await reportKeys(fresh);
  t.equal(now.current.version, 2, 'a process started after the rotation tags with the new key');
  t.not(now.current.secret, loaded[0]!.current.secret);
  t.ok(await verifyReportTag(fresh, id, oldTag), 'a mail tagged before the rotation still verifies');
  const newTag = reportTag(now.current, id);
  t.ok(await verifyReportTag(pools[1]!, id, newTag), 'a process that loaded only version 1 reloads when it meets version 2');
  t.notOk(await verifyReportTag(pools[1]!, id, `3${newTag.slice(1)}`), 'a version that does not exist verifies nothing');
});

t.test('mail ids of one send cannot be computed from one another', async (t) => {
  const a = await makeTenant(dbs.pool);
  await makeSenders(dbs.pool, a.tenant, { domain: 'ids.example', senders: [{ email: 'news', name: 'News' }] });
  const queue = jobQueue(dbs.databaseUrl);
  const sent = await acceptSend(a.tenant, dbs.pool, queue, {
    from: 'news@ids.example',
    to: Array.from({ length: 300 }, (_, i) => ({ email: `r${i}@example.org` })),
    subject: 'Hi',
    text: 'Hi',
  });
  const ids = sent.mails.map((m) => m.mail_id);
  t.equal(new Set(ids).size, 300);
  t.same(ids, [...ids].sort(), 'ascending in recipient order, so listings by (time, mail_id) keep it');
  // Crockford base32 of the 80 random bits; a monotonic factory makes each id the previous + 1.
  const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const random = (id: string) => [...id.slice(10)].reduce((n, c) => n * 32n + BigInt(ALPHABET.indexOf(c)), 0n);
  const sameMs = ids.slice(1).map((id, i) => [ids[i]!, id] as const).filter(([x, y]) => x.slice(0, 10) === y.slice(0, 10));
  t.ok(sameMs.length > 0, `ids made in the same millisecond exist to compare (${sameMs.length} pairs)`);
  const neighbours = sameMs.filter(([x, y]) => { const d = random(y) - random(x); return d >= -2n && d <= 2n; });
  t.same(neighbours, [], 'no two ids of one millisecond differ by a step or two');
});
