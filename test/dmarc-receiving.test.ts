import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { pino } from 'pino';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { addDomain, setDomainChecks } from '../domain/domains/domains.js';
import { DMARC_LIMITS } from '../engines/dmarc/limits.js';
import { loadConfig } from '../config/config.js';
import { startWorker } from '../runtime/worker.js';
import { corpusPath } from './helpers/corpus.js';
import { testDatabases } from './helpers/databases.js';
import { dmarcManifest, gzipBomb, zipOf, type ManifestExpect as Expect } from './helpers/dmarc-files.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { makeTenant } from './helpers/fixtures.js';
import { smtpDeliver } from './helpers/smtp-deliver.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * DMARC aggregate reports end to end, as reporters send them: over SMTP to
 * dmarc@bounces.<domain> at the inbound listener (smtp/inbound-dmarc.ts), stored once in
 * Postgres with their domain.dmarc_report event, shipped by the DMARC shipper into ClickHouse.
 * Every report of the shared corpus (dmarc/manifest.json says what each holds), resends, a report
 * about another domain, hostile files, and DKIM-signed report mails (reporter_authenticated)
 * against a real DNS server.
 */

const dbs = await testDatabases(t, 'dmarc-receiving');
const logger = pino({ level: 'error' }, pino.destination(2));
const dns = await startTestDnsServer(t);
// The worker as it runs (runtime/worker.ts): its inbound listener, its DMARC shipper, DNS_SERVERS for the reporters' DKIM keys.
const worker = await startWorker(
  loadConfig({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, PUBLIC_URL: 'https://cartero.test', INBOUND_SMTP_PORT: '0', DNS_SERVERS: dns.address, LOG_LEVEL: 'error' }),
  logger,
);
t.teardown(() => worker.stop());
const inbound = { port: worker.inboundSmtpPort! };
const clickhouse = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => clickhouse.close());

const manifest = dmarcManifest();
const readable = manifest.reports.filter((r): r is { file: string; expect: Expect } => r.expect !== null);

// Instance a holds every domain the corpus reports on; b holds one more of its own.
const a = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
const web = await startTestWeb(t, dbs);
/** A listing of a's, every page. */
async function listing(domain: string, what: 'dmarc-reports' | 'dmarc-sources'): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${web.url}/v1/domains/${domain}/${what}?page=${page}&page_size=100`, { headers: a.headers });
    const body = (await res.json()) as { data: any[]; pagination: { has_more: boolean } };
    if (res.status !== 200) throw new Error(`${what} of ${domain}: ${res.status} ${JSON.stringify(body)}`);
    rows.push(...body.data);
    if (!body.pagination.has_more) return rows;
  }
}
const b = await makeTenant(dbs.pool);
const domainIds = new Map<string, number>();
for (const name of new Set(readable.map((r) => r.expect.domain))) domainIds.set(name, (await addDomain(a.tenant, dbs.pool, name)).id);
await addDomain(b.tenant, dbs.pool, 'b-only.example');
// example.com is also added by b, whose MX, SPF and DMARC checks pass as a's do (the same records):
// only a's approved DKIM check (its own key) decides whose it is.
await addDomain(b.tenant, dbs.pool, 'example.com');
await setDomainChecks(b.tenant, dbs.pool, 'example.com', { mx: 'approved', spf: 'approved', dmarc: 'approved' });
await setDomainChecks(a.tenant, dbs.pool, 'example.com', { mx: 'approved', spf: 'approved', dmarc: 'approved', dkim: 'approved' });

const to = (domain: string) => `dmarc@bounces.${domain}`;

async function mailOf(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new MailComposer({ from: 'noreply-dmarc@reporter.example', subject: 'Report', date: new Date('2026-12-01T00:00:00Z'), ...options }).compile().build();
}

/** A corpus file as a reporter sends it: an .eml as it is, a report file attached. */
async function corpusMail(file: string): Promise<Buffer> {
  const bytes = readFileSync(corpusPath('dmarc', file));
  if (file.endsWith('.eml')) return bytes;
  const filename = file.split('/').at(-1)!;
  return mailOf({ to: 'dmarc@bounces.example.com', text: 'A DMARC aggregate report.', attachments: [{ filename, content: bytes, contentType: 'application/octet-stream' }] });
}

async function pgReports(): Promise<Array<{ instance_id: string; domain_id: string; org_name: string; report_id: string; message_count: string; dmarc_pass_count: string; record_count: number; reporter_authenticated: boolean; schema: string }>> {
  return (await dbs.pool.query(`SELECT instance_id, domain_id, org_name, report_id, message_count, dmarc_pass_count, record_count, reporter_authenticated, schema FROM dmarc_reports ORDER BY id`)).rows;
}
async function outboxEvents(): Promise<number> {
  return Number((await dbs.pool.query(`SELECT count(*) AS n FROM event_outbox WHERE kind = 'domain.dmarc_report'`)).rows[0].n);
}
async function chRows<T>(query: string): Promise<T[]> {
  return (await (await clickhouse.query({ query, format: 'JSONEachRow' })).json()) as T[];
}
/** Waits until every stored report is in ClickHouse. */
async function shipped(): Promise<void> {
  await waitFor('the DMARC shipper', async () => (Number((await dbs.pool.query(`SELECT count(*) AS n FROM dmarc_reports WHERE shipped_at IS NULL`)).rows[0].n) === 0 ? true : undefined));
}

t.test('every readable report of the corpus, over SMTP: stored under its domain, shipped, counted as the manifest says', async (t) => {
  for (const { file, expect } of readable) {
    const reply = await smtpDeliver(inbound.port, to(expect.domain), await corpusMail(file), 'noreply@reporter.example');
    t.equal(reply.code, 250, `${file}: 250 (${reply.response})`);
    t.match(reply.response, /stored/, `${file}: stored`);
  }
  const rows = await pgReports();
  t.equal(rows.length, readable.length, 'one row per report');
  for (const { file, expect } of readable) {
    const row = rows.find((r) => r.org_name === expect.org_name && r.report_id === expect.report_id);
    t.ok(row, `${file}: stored`);
    if (!row) continue;
    t.same(
      { instance: Number(row.instance_id), domain: Number(row.domain_id), messages: Number(row.message_count), passed: Number(row.dmarc_pass_count), records: row.record_count, schema: row.schema },
      { instance: a.tenant.instanceId, domain: domainIds.get(expect.domain), messages: expect.message_count, passed: expect.dmarc_pass_count, records: expect.records, schema: expect.schema },
      `${file}: in a's ${expect.domain}, figures as the manifest says`,
    );
  }
  t.equal(await outboxEvents(), readable.length, 'one domain.dmarc_report event per report');

  await shipped();
  const reports = await chRows<{ instance_id: number; domain: string; org_name: string; report_id: string; message_count: number; dmarc_pass_count: number; dmarc_fail_count: number; record_count: number }>(
    `SELECT instance_id, domain, org_name, report_id, message_count, dmarc_pass_count, dmarc_fail_count, record_count FROM dmarc_reports FINAL`,
  );
  t.equal(reports.length, readable.length, 'every report in ClickHouse');
  for (const { file, expect } of readable) {
    const r = reports.find((x) => x.org_name === expect.org_name && x.report_id === expect.report_id);
    t.match(r, { instance_id: a.tenant.instanceId, domain: expect.domain, message_count: expect.message_count, dmarc_pass_count: expect.dmarc_pass_count, dmarc_fail_count: expect.message_count - expect.dmarc_pass_count, record_count: expect.records }, `${file}: in ClickHouse`);
  }
  const [records] = await chRows<{ n: number; messages: number }>(`SELECT count() AS n, sum(count) AS messages FROM dmarc_records FINAL`);
  t.same(
    records,
    { n: readable.reduce((n, r) => n + r.expect.records, 0), messages: readable.reduce((n, r) => n + r.expect.message_count, 0) },
    'every record in ClickHouse, with its count',
  );
  // What an integrator reads: each domain's reports, figures as the manifest says.
  for (const domain of domainIds.keys()) {
    const listed = await listing(domain, 'dmarc-reports');
    const expected = readable.filter((r) => r.expect.domain === domain);
    t.equal(listed.length, expected.length, `GET /v1/domains/${domain}/dmarc-reports: every report`);
    for (const { file, expect } of expected) {
      t.match(
        listed.find((x) => x.org_name === expect.org_name && x.report_id === expect.report_id),
        { schema: expect.schema, message_count: expect.message_count, dmarc_pass_count: expect.dmarc_pass_count, dmarc_fail_count: expect.message_count - expect.dmarc_pass_count, reporter_authenticated: false, policy: { domain: expect.domain } },
        `${file}: as listed`,
      );
    }
    const sources = await listing(domain, 'dmarc-sources');
    t.equal(
      sources.reduce((n, s) => n + s.message_count, 0),
      expected.reduce((n, r) => n + r.expect.message_count, 0),
      `GET /v1/domains/${domain}/dmarc-sources: every message, once`,
    );
    t.equal(
      sources.reduce((n, s) => n + s.dmarc_pass_count, 0),
      expected.reduce((n, r) => n + r.expect.dmarc_pass_count, 0),
      `GET /v1/domains/${domain}/dmarc-sources: every pass, once`,
    );
  }
  const left = await dbs.pool.query(`SELECT count(*) AS n FROM dmarc_reports WHERE records IS NOT NULL`);
  t.equal(Number(left.rows[0].n), 0, 'shipped records leave Postgres');
});

t.test('several reports in one mail: each stored, with its own event, and one refused beside them', async (t) => {
  const sample = readFileSync(corpusPath('dmarc', 'samples', 'rfc9990-sample.xml'), 'utf8');
  const withId = (id: string) => Buffer.from(sample.replace(/<report_id>[^<]+<\/report_id>/, `<report_id>${id}</report_id>`));
  const before = { rows: (await pgReports()).length, events: await outboxEvents() };
  const reply = await smtpDeliver(
    inbound.port,
    to('example.com'),
    await mailOf({
      attachments: [
        { filename: 'one.xml', content: withId('several-1') },
        { filename: 'two.xml.gz', content: gzipSync(withId('several-2')) },
        { filename: 'broken.xml', content: Buffer.from('<feedback><report_metadata>') },
      ],
    }),
  );
  t.match(reply, { code: 250, response: /2 DMARC report\(s\) stored/ });
  const ids = (await pgReports()).map((r) => r.report_id);
  t.ok(ids.includes('several-1') && ids.includes('several-2'), 'both reports stored');
  t.same({ rows: (await pgReports()).length, events: await outboxEvents() }, { rows: before.rows + 2, events: before.events + 2 }, 'two rows, two events');
});

t.test('a report resent, or sent again in the other format, is stored once, with one event', async (t) => {
  const { file, expect } = readable.find((r) => r.file.endsWith('rfc9990-sample.xml'))!;
  const before = { rows: (await pgReports()).length, events: await outboxEvents() };
  const again = await smtpDeliver(inbound.port, to(expect.domain), await corpusMail(file));
  t.equal(again.code, 250);
  t.match(again.response, /already stored/);
  // The same report in RFC 7489 form: same reporter and id, another namespace.
  const xml = readFileSync(corpusPath('dmarc', file), 'utf8').replace(/\s+xmlns="urn:ietf:params:xml:ns:dmarc-2\.0"/, '');
  t.not(xml, readFileSync(corpusPath('dmarc', file), 'utf8'), 'the namespace was taken out');
  const other = await smtpDeliver(inbound.port, to(expect.domain), await mailOf({ to: to(expect.domain), attachments: [{ filename: 'r.xml.gz', content: gzipSync(Buffer.from(xml)) }] }));
  t.match(other, { code: 250, response: /already stored/ });
  t.same({ rows: (await pgReports()).length, events: await outboxEvents() }, before, 'nothing new');
});

t.test('a report about a domain other than its address’s is refused 550 5.7.1; an address of no domain 550 5.1.1', async (t) => {
  const { file } = readable.find((r) => r.expect.domain === 'example.com')!;
  const before = (await pgReports()).length;
  const foreign = await smtpDeliver(inbound.port, to('b-only.example'), await corpusMail(file));
  t.equal(foreign.code, 550);
  t.match(foreign.response, /5\.7\.1/);
  const nobody = await smtpDeliver(inbound.port, to('nobody.example'), await corpusMail(file));
  t.equal(nobody.code, 550);
  t.match(nobody.response, /5\.1\.1/);
  t.equal((await pgReports()).length, before, 'nothing stored');
  // A report about a subdomain of the address's domain is the domain's.
  const sub = readFileSync(corpusPath('dmarc', 'samples', 'rfc9990-sample.xml'), 'utf8')
    .replace(/<domain>example\.com<\/domain>/, '<domain>mail.b-only.example</domain>')
    .replace(/<report_id>[^<]+<\/report_id>/, '<report_id>subdomain-1</report_id>');
  const accepted = await smtpDeliver(inbound.port, to('b-only.example'), await mailOf({ to: to('b-only.example'), attachments: [{ filename: 'r.xml', content: Buffer.from(sub) }] }));
  t.match(accepted, { code: 250, response: /stored/ });
  const row = (await pgReports()).find((r) => r.report_id === 'subdomain-1');
  t.equal(Number(row?.instance_id), b.tenant.instanceId, "filed in b, whose domain's address it came to");
});

t.test('hostile and broken reports: 250, nothing stored, and the listener keeps answering', async (t) => {
  const sample = readFileSync(corpusPath('dmarc', 'samples', 'rfc9990-sample.xml'), 'utf8');
  const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>${sample.replace(/^<\?xml[^>]*>/, '').replace('Sample Reporter</org_name>', '&lol2;</org_name>')}`;
  const xxe = `<?xml version="1.0"?><!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${sample.replace(/^<\?xml[^>]*>/, '').replace('Sample Reporter</org_name>', '&xxe;</org_name>')}`;
  const bomb = await gzipBomb(300);
  t.ok(bomb.length < 1024 * 1024, `a 300 MB gzip bomb, ${bomb.length} bytes compressed`);
  const manyRecords = sample.replace(/<record>[^]*<\/record>/, (r) => r.repeat(DMARC_LIMITS.maxRecords + 1));
  const cases: Array<[string, Buffer]> = [
    ['billion laughs', await mailOf({ attachments: [{ filename: 'r.xml', content: Buffer.from(laughs) }] })],
    ['XXE', await mailOf({ attachments: [{ filename: 'r.xml', content: Buffer.from(xxe) }] })],
    ['a gzip bomb', await mailOf({ attachments: [{ filename: 'r.xml.gz', content: bomb }] })],
    ['a zip whose header lies', await mailOf({ attachments: [{ filename: 'r.zip', content: zipOf('r.xml', Buffer.alloc(50 * 1024 * 1024, 0x20), 1000) }] })],
    ['invalid UTF-8', await mailOf({ attachments: [{ filename: 'r.xml', content: Buffer.concat([Buffer.from(sample.slice(0, 200)), Buffer.from([0xff, 0xfe, 0xc0]), Buffer.from(sample.slice(200))]) }] })],
    ['garbage', await mailOf({ attachments: [{ filename: 'r.xml.gz', content: Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.alloc(4000, 7)]) }] })],
    ['past the record cap', await mailOf({ attachments: [{ filename: 'r.xml.gz', content: gzipSync(Buffer.from(manyRecords)) }] })],
    ['no report at all', await mailOf({ text: 'Hello, is this the DMARC desk?' })],
  ];
  const before = { rows: (await pgReports()).length, events: await outboxEvents() };
  for (const [what, raw] of cases) {
    const reply = await smtpDeliver(inbound.port, to('example.com'), raw);
    t.equal(reply.code, 250, `${what}: 250, never a 5xx (${reply.response})`);
    t.match(reply.response, /no report read/, `${what}: nothing read`);
  }
  t.same({ rows: (await pgReports()).length, events: await outboxEvents() }, before, 'nothing stored');
  const fresh = sample.replace(/<report_id>[^<]+<\/report_id>/, '<report_id>after-the-storm</report_id>');
  const after = await smtpDeliver(inbound.port, to('example.com'), await mailOf({ attachments: [{ filename: 'r.xml', content: Buffer.from(fresh) }] }));
  t.match(after, { code: 250, response: /1 DMARC report\(s\) stored/ }, 'the next report is read as ever');
});

t.test('reporter_authenticated: a report mail DKIM-signed by its From domain, checked against DNS', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pub = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.txt('r1._domainkey.reporter.example', `v=DKIM1; k=rsa; p=${pub}`);
  const sample = readFileSync(corpusPath('dmarc', 'samples', 'rfc9990-sample.xml'), 'utf8');
  const report = (id: string) => [{ filename: `${id}.xml`, content: Buffer.from(sample.replace(/<report_id>[^<]+<\/report_id>/, `<report_id>${id}</report_id>`)) }];
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const signed = async (id: string, signingDomain: string) => {
    const message = await mailOf({ to: to('example.com'), attachments: report(id) });
    const { signatures } = await dkimSign(message, { signingDomain, selector: 'r1', privateKey: pem, signatureData: [{ signingDomain, selector: 'r1', privateKey: pem }] } as Parameters<typeof dkimSign>[1]);
    return Buffer.concat([Buffer.from(signatures), message]);
  };

  const cases: Array<[string, Buffer, boolean]> = [
    ['signed by the From domain', await signed('signed-1', 'reporter.example'), true],
    ['unsigned', await mailOf({ attachments: report('unsigned-1') }), false],
    ['signed by a domain unrelated to From (no lookup made)', await signed('unaligned-1', 'elsewhere.example'), false],
  ];
  // Tampered after signing: the signature no longer verifies.
  const tampered = Buffer.from((await signed('tampered-1', 'reporter.example')).toString('latin1').replace('Subject: Report', 'Subject: Rep0rt'), 'latin1');
  cases.push(['signed, then altered', tampered, false]);
  for (const [what, raw, expected] of cases) {
    const reply = await smtpDeliver(inbound.port, to('example.com'), raw);
    t.equal(reply.code, 250, `${what}: 250`);
  }
  const rows = await pgReports();
  for (const [what, , expected] of cases) {
    const id = what === 'signed by the From domain' ? 'signed-1' : what === 'unsigned' ? 'unsigned-1' : what.startsWith('signed by a domain') ? 'unaligned-1' : 'tampered-1';
    t.equal(rows.find((r) => r.report_id === id)?.reporter_authenticated, expected, `${what}: reporter_authenticated ${expected}`);
  }
});

t.test("cartero_signed: a record whose DKIM results pass with one of the domain's own selectors", async (t) => {
  const domainId = domainIds.get('example.com')!;
  await dbs.pool.query(
    `INSERT INTO dkim_keys (instance_id, domain_id, selector, public_key, private_key_enc, key_ring_id) VALUES ($1, $2, 'cartero1', 'AAAA', '\\x00', 'test')`,
    [a.tenant.instanceId, domainId],
  );
  const record = (ip: string, selector: string, result: string) =>
    `<record><row><source_ip>${ip}</source_ip><count>3</count><policy_evaluated><disposition>none</disposition><dkim>${result}</dkim><spf>fail</spf></policy_evaluated></row>` +
    `<identifiers><header_from>example.com</header_from></identifiers><auth_results><dkim><domain>example.com</domain><selector>${selector}</selector><result>${result}</result></dkim><spf><domain>example.com</domain><result>fail</result></spf></auth_results></record>`;
  const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>Selectors Inc</org_name><email>r@selectors.example</email><report_id>sel-1</report_id><date_range><begin>1764547200</begin><end>1764633599</end></date_range></report_metadata><policy_published><domain>example.com</domain><p>none</p></policy_published>${record('192.0.2.1', 'cartero1', 'pass')}${record('192.0.2.2', 'other', 'pass')}${record('192.0.2.3', 'cartero1', 'fail')}</feedback>`;
  const reply = await smtpDeliver(inbound.port, to('example.com'), await mailOf({ attachments: [{ filename: 'sel.xml', content: Buffer.from(xml) }] }));
  t.match(reply, { code: 250, response: /stored/ });
  await shipped();
  const rows = await chRows<{ source_ip: string; cartero_signed: boolean }>(`SELECT source_ip, cartero_signed FROM dmarc_records FINAL WHERE org_name = 'Selectors Inc' ORDER BY source_ip`);
  t.same(
    rows,
    [
      { source_ip: '192.0.2.1', cartero_signed: true },
      { source_ip: '192.0.2.2', cartero_signed: false },
      { source_ip: '192.0.2.3', cartero_signed: false },
    ],
    "only the pass by the domain's own selector",
  );
});
