import { gzipSync } from 'node:zlib';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { AggregateReport, ReportRecord } from '../engines/dmarc/report.js';
import { zipOf } from '../test/helpers/dmarc-files.js';

/**
 * DMARC aggregate reports as the big mailbox providers send them, for bench/dmarc.ts: one model
 * (engines/dmarc/report.ts's AggregateReport) written out two ways, as XML in a report mail for
 * the listener (part 1) and as the shipper's own rows for ClickHouse (part 2), so both parts
 * measure the same kind of day.
 *
 * A domain's day, per reporter: Cartero's two sending IPs (DKIM pass by the domain's Cartero
 * selector, SPF pass: cartero_signed), one or two IPs of the domain's own office mail (Google
 * Workspace, DKIM `google`), sometimes a forwarder (Cartero's signature survives, SPF fails), and
 * 0–3 strangers sending as the domain (both fail; quarantined as the published policy says),
 * drawn from a pool of a few hundred addresses per domain, so a year shows a few hundred sources.
 * About 5 records a report, a few to a few thousand messages each.
 */


const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** How each reporter names, sends and sizes its reports (volumes: Google's share is the largest). */
export interface Reporter {
  org: string;
  email: string;
  /** The attachment's file name prefix (`<host>!<domain>!<begin>!<end>`). */
  host: string;
  /** Google sends zip, the others gzip. */
  format: 'zip' | 'gz';
  /** Messages from one Cartero IP in a day, at most. */
  volume: number;
}

export const REPORTERS: readonly Reporter[] = [
  { org: 'google.com', email: 'noreply-dmarc-support@google.com', host: 'google.com', format: 'zip', volume: 2_000 },
  { org: 'Enterprise Outlook', email: 'dmarcreport@microsoft.com', host: 'enterprise.protection.outlook.com', format: 'gz', volume: 800 },
  { org: 'Yahoo', email: 'dmarchelp@yahooinc.com', host: 'yahoo.com', format: 'gz', volume: 500 },
  { org: 'Mail.Ru', email: 'dmarc_support@corp.mail.ru', host: 'mail.ru', format: 'gz', volume: 200 },
  { org: 'Fastmail Pty Ltd', email: 'dmarc-reports@fastmail.com', host: 'fastmail.com', format: 'gz', volume: 50 },
];

/** Cartero's sending IPs (documentation range: nothing here leaves the machine). */
const CARTERO_IPS = ['203.0.113.10', '203.0.113.11'];
const WORKSPACE_IPS = ['209.85.220.41', '209.85.220.69'];

/** A stranger's address, one of ~300 per domain (`salt` tells the domains apart). */
function strangerIp(salt: number, n: number): string {
  const x = (salt * 7919 + n * 104729) >>> 0;
  return `${45 + (x % 150)}.${(x >>> 8) % 256}.${(x >>> 16) % 256}.${1 + (n % 250)}`;
}

function record(ip: string, count: number, domain: string, kind: 'cartero' | 'workspace' | 'forwarder' | 'stranger', selector: string, policy: string): ReportRecord {
  const pass = (d: string | null, s: string | null) => [{ domain: d, selector: s, result: 'pass', humanResult: null }];
  switch (kind) {
    case 'cartero':
      return {
        sourceIp: ip, count, disposition: 'none', dkim: 'pass', spf: 'pass', reasons: [], headerFrom: domain,
        envelopeFrom: `bounces.${domain}`, envelopeTo: null,
        dkimResults: pass(domain, selector), spfResults: [{ domain: `bounces.${domain}`, scope: 'mfrom', result: 'pass', humanResult: null }],
      };
    case 'workspace':
      return {
        sourceIp: ip, count, disposition: 'none', dkim: 'pass', spf: 'pass', reasons: [], headerFrom: domain,
        envelopeFrom: domain, envelopeTo: null,
        dkimResults: pass(domain, 'google'), spfResults: [{ domain, scope: 'mfrom', result: 'pass', humanResult: null }],
      };
    case 'forwarder':
      return {
        sourceIp: ip, count, disposition: 'none', dkim: 'pass', spf: 'fail', reasons: [{ type: 'forwarded', comment: null }], headerFrom: domain,
        envelopeFrom: 'lists.example.org', envelopeTo: null,
        dkimResults: pass(domain, selector), spfResults: [{ domain: 'lists.example.org', scope: 'mfrom', result: 'pass', humanResult: null }],
      };
    case 'stranger':
      return {
        sourceIp: ip, count, disposition: policy, dkim: 'fail', spf: 'fail', reasons: [], headerFrom: domain,
        envelopeFrom: domain, envelopeTo: null,
        dkimResults: [], spfResults: [{ domain, scope: 'mfrom', result: 'fail', humanResult: null }],
      };
  }
}

export interface DayReport {
  reporter: Reporter;
  report: AggregateReport;
}

/**
 * One reporter's report about `domain` for the UTC day starting at `day` (Unix seconds).
 * `salt` is the domain's number (its strangers), `n` makes the report id unique.
 */
export function dayReport(r: () => number, reporter: Reporter, domain: string, salt: number, selector: string, day: number, n: number): DayReport {
  const policy = 'quarantine';
  const records: ReportRecord[] = [];
  for (const ip of CARTERO_IPS) records.push(record(ip, int(r, 1, reporter.volume), domain, 'cartero', selector, policy));
  for (const ip of WORKSPACE_IPS.slice(0, int(r, 1, 2))) records.push(record(ip, int(r, 1, Math.ceil(reporter.volume / 10)), domain, 'workspace', selector, policy));
  if (r() < 0.4) records.push(record(`198.51.100.${int(r, 1, 20)}`, int(r, 1, 30), domain, 'forwarder', selector, policy));
  for (let i = int(r, 0, 3); i > 0; i--) records.push(record(strangerIp(salt, int(r, 0, 299)), int(r, 1, 10), domain, 'stranger', selector, policy));
  return { reporter, report: reportOf(reporter, domain, day, `${reporter.host.split('.')[0]}-${n}-${Math.floor(r() * 1e9)}`, records) };
}

/** A report of `records` distinct sources (the 10,000-record report of a big sender's day). */
export function bigReport(r: () => number, domain: string, selector: string, day: number, records: number, n: number): DayReport {
  const reporter = REPORTERS[0]!;
  const rows = Array.from({ length: records }, (_, i) => {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const kind = i < 50 ? 'cartero' : i % 5 === 0 ? 'forwarder' : 'stranger';
    return record(ip, int(r, 1, 50), domain, kind, selector, 'quarantine');
  });
  return { reporter, report: reportOf(reporter, domain, day, `big-${n}-${Math.floor(r() * 1e9)}`, rows) };
}

function reportOf(reporter: Reporter, domain: string, day: number, reportId: string, records: ReportRecord[]): AggregateReport {
  return {
    schema: 'rfc7489',
    orgName: reporter.org,
    orgEmail: reporter.email,
    extraContactInfo: null,
    reportId,
    begin: day,
    end: day + 86_399,
    generator: null,
    errors: [],
    policy: { domain, p: 'quarantine', sp: 'quarantine', np: null, pct: 100, adkim: 'r', aspf: 'r', fo: '0', testing: null, discoveryMethod: null },
    records,
  };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const el = (name: string, v: string | number | null | undefined) => (v === null || v === undefined ? '' : `<${name}>${esc(String(v))}</${name}>`);

/** The report as RFC 7489 appendix C XML, the way Google and Microsoft lay it out. */
export function reportXml(rep: AggregateReport): string {
  const p = rep.policy;
  const out = [
    '<?xml version="1.0" encoding="UTF-8" ?>\n<feedback>\n<version>1.0</version>\n',
    `<report_metadata>${el('org_name', rep.orgName)}${el('email', rep.orgEmail)}${el('report_id', rep.reportId)}<date_range>${el('begin', rep.begin)}${el('end', rep.end)}</date_range></report_metadata>\n`,
    `<policy_published>${el('domain', p.domain)}${el('adkim', p.adkim)}${el('aspf', p.aspf)}${el('p', p.p)}${el('sp', p.sp)}${el('pct', p.pct)}${el('fo', p.fo)}</policy_published>\n`,
  ];
  for (const r of rep.records) {
    const reasons = r.reasons.map((x) => `<reason>${el('type', x.type)}${el('comment', x.comment)}</reason>`).join('');
    out.push(
      `<record><row>${el('source_ip', r.sourceIp)}${el('count', r.count)}<policy_evaluated>${el('disposition', r.disposition)}${el('dkim', r.dkim)}${el('spf', r.spf)}${reasons}</policy_evaluated></row>` +
        `<identifiers>${el('envelope_to', r.envelopeTo)}${el('envelope_from', r.envelopeFrom)}${el('header_from', r.headerFrom)}</identifiers><auth_results>` +
        r.dkimResults.map((d) => `<dkim>${el('domain', d.domain)}${el('selector', d.selector)}${el('result', d.result)}</dkim>`).join('') +
        r.spfResults.map((s) => `<spf>${el('domain', s.domain)}${el('scope', s.scope)}${el('result', s.result)}</spf>`).join('') +
        '</auth_results></record>\n',
    );
  }
  out.push('</feedback>\n');
  return out.join('');
}

/** The report mail as its reporter sends it to dmarc@bounces.<domain>: the XML zipped (Google) or gzipped, attached. */
export async function reportMail({ reporter, report }: DayReport, to: string): Promise<Buffer> {
  const xml = Buffer.from(reportXml(report));
  const name = `${reporter.host}!${report.policy.domain}!${report.begin}!${report.end}`;
  const attachment =
    reporter.format === 'zip'
      ? { filename: `${name}.zip`, content: zipOf(`${name}.xml`, xml), contentType: 'application/zip' }
      : { filename: `${name}.xml.gz`, content: gzipSync(xml), contentType: 'application/gzip' };
  return new MailComposer({
    from: reporter.email,
    to,
    subject: `Report Domain: ${report.policy.domain} Submitter: ${reporter.host} Report-ID: <${report.reportId}>`,
    date: new Date((report.end + 3_600) * 1000),
    text: `This is an aggregate report from ${reporter.org}.`,
    attachments: [attachment],
  })
    .compile()
    .build();
}
