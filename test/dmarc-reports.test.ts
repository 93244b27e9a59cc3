import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import t from 'tap';
import { DMARC_LIMITS } from '../engines/dmarc/limits.js';
import { readReportMail } from '../engines/dmarc/mail.js';
import { parseAggregateReport } from '../engines/dmarc/parse.js';
import { DmarcReportRefused, type DmarcRefusalReason } from '../engines/dmarc/refusal.js';
import { reportCounts, type AggregateReport } from '../engines/dmarc/report.js';
import { unpackReportFile } from '../engines/dmarc/unpack.js';
import { corpusPath } from './helpers/corpus.js';
import { dmarcManifest, gzipBomb, zipOf, type ManifestExpect as Expect } from './helpers/dmarc-files.js';

/**
 * The DMARC aggregate report reader (engines/dmarc/), on the real reports of the shared corpus
 * (`dmarc/manifest.json` says what each holds) and on hostile ones made here: entity bombs and
 * external entities, decompression bombs (gzip and zip, honest and lying headers), the record
 * cap, invalid bytes and garbage.
 */

const manifest = dmarcManifest();

/** Every report a file holds, whatever the file: a mail (.eml) or a report file. */
async function readFile(file: string): Promise<AggregateReport[]> {
  const bytes = readFileSync(corpusPath('dmarc', file));
  if (file.endsWith('.eml')) {
    const readings = await readReportMail(await simpleParser(bytes));
    return readings.map((r) => {
      if ('refused' in r) throw r.refused;
      return r.report;
    });
  }
  return (await unpackReportFile(bytes)).map((xml) => parseAggregateReport(xml));
}

function summary(report: AggregateReport): Expect {
  const { messages, passed } = reportCounts(report);
  return { org_name: report.orgName, report_id: report.reportId, domain: report.policy.domain, message_count: messages, dmarc_pass_count: passed, records: report.records.length, schema: report.schema };
}

async function refusal(read: () => unknown): Promise<DmarcRefusalReason | 'read'> {
  try {
    await read();
    return 'read';
  } catch (e) {
    if (e instanceof DmarcReportRefused) return e.reason;
    throw e;
  }
}

/**
 * The corpus entries whose manifest says null (a strict XML parser refuses them): what this
 * reader decides for each one it knows (the reasons are in engines/dmarc/parse.ts and unpack.ts), by file name. Any other null entry must
 * be refused with a reason, or read: never an unexpected error.
 */
const DECIDED: Record<string, DmarcRefusalReason | 'read'> = {
  'ikea.com_example.de_1538690400_1538776800.xml': 'read', // a whole <feedback> inside an unclosed xs:schema wrapper
  'mimecast-weird-gzip.eml': 'read', // a gzip member followed by a stray CRLF, which gzip(1) ignores too
  'invalid_utf_8.xml': 'invalid_encoding',
  'invalid_xml.xml': 'invalid_xml',
};

t.test('every report of the corpus reads as its manifest says', async (t) => {
  t.ok(manifest.reports.length > 0, 'the manifest lists reports');
  for (const entry of manifest.reports) {
    const name = entry.file.split('/').at(-1)!;
    if (entry.expect) {
      const reports = await readFile(entry.file);
      t.equal(reports.length, 1, `${name}: one report`);
      t.same(summary(reports[0]!), entry.expect, `${name}: as the manifest says`);
    } else {
      const outcome = await refusal(() => readFile(entry.file));
      if (DECIDED[name]) t.equal(outcome, DECIDED[name], `${name}: ${DECIDED[name]}`);
      else t.pass(`${name}: ${outcome} (a refusal with its reason, or a read)`);
    }
  }
});

const SAMPLE = readFileSync(corpusPath('dmarc', 'samples', 'rfc9990-example.net_example.com_1700000000_1700086399.xml'), 'utf8');
const bytes = (text: string) => Buffer.from(text, 'utf8');

t.test('the fields of a record, lower-cased keywords, both namespaces', async (t) => {
  const report = parseAggregateReport(bytes(SAMPLE));
  t.match(report, { orgEmail: 'postmaster@example.net', begin: 1700000000, end: 1700086399, policy: { domain: 'example.com', p: 'reject', sp: 'quarantine', np: 'reject', adkim: 's', testing: 'y', discoveryMethod: 'treewalk', pct: null } });
  t.match(report.records[0], { sourceIp: '198.51.100.1', count: 5, disposition: 'none', dkim: 'pass', spf: 'pass', headerFrom: 'example.com', dkimResults: [{ domain: 'example.com', selector: 'selector1', result: 'pass' }], spfResults: [{ scope: 'mfrom', result: 'pass' }] });
  t.equal(report.records[1]!.reasons.length, 1, "a policy_evaluated reason is kept");
  const old = SAMPLE.replace('<feedback>', '<feedback xmlns="http://dmarc.org/dmarc-xml/0.1">');
  t.equal(parseAggregateReport(bytes(old)).schema, 'rfc7489', 'the RFC 7489 namespace');
  const bis = SAMPLE.replace('<feedback>', '<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0">');
  t.equal(parseAggregateReport(bytes(bis)).schema, 'rfc9990', "RFC 9990's namespace");
  const upper = SAMPLE.replace('<dkim>pass</dkim>', '<dkim>PASS</dkim>').replace('<p>reject</p>', '<p>Reject</p>');
  t.match(parseAggregateReport(bytes(upper)), { policy: { p: 'reject' }, records: [{ dkim: 'pass' }] });
  const draft = SAMPLE.replaceAll('identifiers>', 'identities>');
  t.equal(parseAggregateReport(bytes(draft)).records[0]!.headerFrom, 'example.com', "the drafts' identities element");
  const latin1 = Buffer.from(SAMPLE.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>').replace('example.net</org_name>', 'Ex\u00e9mple</org_name>'), 'latin1');
  t.equal(parseAggregateReport(latin1).orgName, 'Ex\u00e9mple', 'decoded as its declaration says');
});

t.test('entity bombs and external entities are refused before anything is expanded or fetched', async (t) => {
  const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>${SAMPLE.replace(/^<\?xml[^>]*>/, '').replace('example.net</org_name>', '&lol3;</org_name>')}`;
  t.equal(await refusal(() => parseAggregateReport(bytes(laughs))), 'dtd_forbidden', 'billion laughs');
  const xxe = `<?xml version="1.0"?><!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${SAMPLE.replace(/^<\?xml[^>]*>/, '').replace('example.net</org_name>', '&xxe;</org_name>')}`;
  t.equal(await refusal(() => parseAggregateReport(bytes(xxe))), 'dtd_forbidden', 'XXE');
  const undeclared = SAMPLE.replace('example.net</org_name>', '&xxe;</org_name>');
  t.equal(await refusal(() => parseAggregateReport(bytes(undeclared))), 'invalid_xml', 'an entity never declared');
});

t.test('decompression bombs are cut, not inflated whole', async (t) => {
  const bomb = await gzipBomb(300);
  t.ok(bomb.length < 1024 * 1024, `a 300 MB gzip bomb of ${bomb.length} bytes`);
  t.equal(await refusal(() => unpackReportFile(bomb)), 'compression_ratio', 'refused at 200 × its size');
  t.equal(await refusal(() => unpackReportFile(bomb, { ...DMARC_LIMITS, maxCompressionRatio: 100_000, maxXmlBytes: 8 * 1024 * 1024 })), 'too_large', 'or at the size cap');
  const honest = gzipSync(bytes(SAMPLE));
  t.equal((await unpackReportFile(honest))[0]!.toString(), SAMPLE, 'a report well within the ratio reads');
  t.equal(await refusal(() => unpackReportFile(honest, { ...DMARC_LIMITS, maxCompressionRatio: 2 })), 'compression_ratio', 'the same report past a lower ratio');
  const corrupt = Buffer.from(honest);
  corrupt.writeUInt32LE(corrupt.readUInt32LE(corrupt.length - 8) ^ 1, corrupt.length - 8);
  t.equal(await refusal(() => unpackReportFile(corrupt)), 'bad_archive', "a gzip whose CRC does not match");

  const zeros = Buffer.alloc(100 * 1024 * 1024);
  t.equal(await refusal(() => unpackReportFile(zipOf('bomb.xml', zeros))), 'compression_ratio', 'a zip bomb that says its size: refused before inflating');
  t.equal(await refusal(() => unpackReportFile(zipOf('bomb.xml', zeros, 1000))), 'bad_archive', 'a zip bomb that lies about its size: cut when it passes what it declared');
  t.equal((await unpackReportFile(zipOf('r.xml', bytes(SAMPLE))))[0]!.toString(), SAMPLE, 'an honest zip reads');
});

t.test('the record cap, invalid bytes, garbage and missing fields', async (t) => {
  t.equal(await refusal(() => parseAggregateReport(bytes(SAMPLE), { ...DMARC_LIMITS, maxRecords: 1 })), 'too_many_records', 'two records past a cap of one');
  t.equal(await refusal(() => parseAggregateReport(Buffer.concat([bytes(SAMPLE.slice(0, 300)), Buffer.from([0xc3, 0x28]), bytes(SAMPLE.slice(300))]))), 'invalid_encoding', 'invalid UTF-8');
  t.equal(await refusal(() => unpackReportFile(Buffer.from('this is not a report at all'))), 'not_a_report', 'text');
  t.equal(await refusal(() => unpackReportFile(Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]))), 'bad_archive', 'a broken gzip');
  t.equal(await refusal(() => unpackReportFile(Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(64, 7)]))), 'bad_archive', 'a broken zip');
  t.equal(await refusal(() => parseAggregateReport(bytes(SAMPLE.slice(0, SAMPLE.length / 2)))), 'invalid_xml', 'a report cut short');
  t.equal(await refusal(() => parseAggregateReport(bytes('<?xml version="1.0"?><html><body/></html>'))), 'not_a_report', 'XML that is no report');
  t.equal(await refusal(() => parseAggregateReport(bytes(SAMPLE.replace(/<report_id>.*<\/report_id>/, '')))), 'missing_field', 'no report_id');
  t.equal(await refusal(() => parseAggregateReport(bytes(SAMPLE.replace('<count>5</count>', '<count>five</count>')))), 'invalid_value', 'a count that is no number');
  t.equal(await refusal(() => parseAggregateReport(bytes(SAMPLE.replace('198.51.100.1', '198.51.100.1; DROP TABLE')))), 'invalid_value', 'a source_ip that is no address');
});

async function mailOf(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Awaited<ReturnType<typeof simpleParser>>> {
  const raw = await new MailComposer({ from: 'noreply-dmarc@reporter.example', to: 'dmarc@bounces.example.com', subject: 'Report Domain: example.com', ...options }).compile().build();
  return simpleParser(raw);
}

t.test('a mail: several reports each read, a refused one beside them, or the report as the body', async (t) => {
  const second = SAMPLE.replace('dmarcbis-test-report-001', 'second-report');
  const mail = await mailOf({
    text: 'Reports attached.',
    attachments: [
      { filename: 'a.xml', content: bytes(SAMPLE), contentType: 'text/xml' },
      { filename: 'b.xml.gz', content: gzipSync(bytes(second)), contentType: 'application/octet-stream' },
      { filename: 'c.zip', content: zipOf('c.xml', bytes('<feedback><report_metadata>')), contentType: 'application/zip' },
      { filename: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), contentType: 'image/png' },
    ],
  });
  const readings = await readReportMail(mail);
  t.same(readings.map((r) => ('report' in r ? r.report.reportId : r.refused.reason)), ['dmarcbis-test-report-001', 'second-report', 'invalid_xml'], 'two reports and one refusal; the image is no report');
  for (const textEncoding of ['quoted-printable', 'base64'] as const) {
    const body = await readReportMail(await mailOf({ text: SAMPLE, textEncoding }));
    t.same(body.map((r) => ('report' in r ? r.report.reportId : r.refused.reason)), ['dmarcbis-test-report-001'], `the body as the report, ${textEncoding}`);
  }
  const encodings = await readReportMail(
    await mailOf({
      text: 'Reports attached.',
      attachments: [
        { filename: 'q.xml', content: SAMPLE, contentTransferEncoding: 'quoted-printable' },
        { filename: 'b.xml.gz', content: gzipSync(bytes(second)), contentTransferEncoding: 'base64' },
      ],
    }),
  );
  t.same(encodings.map((r) => ('report' in r ? r.report.reportId : r.refused.reason)), ['dmarcbis-test-report-001', 'second-report'], 'attachments in quoted-printable and base64');
  t.same(await readReportMail(await mailOf({ text: 'Hello, no report here.' })), [], 'a mail without a report');
});
