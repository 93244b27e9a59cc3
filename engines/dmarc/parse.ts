import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { DMARC_LIMITS, type DmarcLimits } from './limits.js';
import { DmarcReportRefused } from './refusal.js';
import type { AggregateReport, PublishedPolicy, ReportRecord } from './report.js';

const RFC9990_NAMESPACE = 'urn:ietf:params:xml:ns:dmarc-2.0';

/** One element of the report, by local name (namespace prefixes vary between reporters). */
interface Node {
  name: string;
  text: string;
  children: Node[];
}

function child(node: Node | undefined, ...path: string[]): Node | undefined {
  let at = node;
  for (const name of path) at = at?.children.find((c) => c.name === name);
  return at;
}

function text(node: Node | undefined, ...path: string[]): string | null {
  const value = child(node, ...path)?.text.trim();
  return value ? value : null;
}

/** A keyword (`pass`, `reject`, `r`...): reporters write `Pass` and `PASS` too. */
function keyword(node: Node | undefined, ...path: string[]): string | null {
  return text(node, ...path)?.toLowerCase() ?? null;
}

function required(node: Node | undefined, where: string, ...path: string[]): string {
  const value = text(node, ...path);
  if (value === null) throw new DmarcReportRefused('missing_field', `the report has no ${[where, ...path].join('/')}`);
  return value;
}

function wholeNumber(value: string, what: string): number {
  // Some reporters write a date as 1538413632.0 or with spaces: a whole number all the same.
  const n = Number(value.trim());
  if (!Number.isFinite(n) || n < 0 || n > Number.MAX_SAFE_INTEGER) throw new DmarcReportRefused('invalid_value', `${what} is not a whole number: ${JSON.stringify(value.slice(0, 40))}`);
  return Math.floor(n);
}

/** Before 2100: a period no report can honestly have otherwise, and one every store holds. */
const LAST_TIME = Date.UTC(2100, 0, 1) / 1000;

function unixTime(value: string, what: string): number {
  const n = wholeNumber(value, what);
  if (n >= LAST_TIME) throw new DmarcReportRefused('invalid_value', `${what} is not a time before 2100: ${JSON.stringify(value.slice(0, 40))}`);
  return n;
}

function domainName(value: string): string {
  return value.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * The text of a report file, decoded as its XML declaration says (UTF-8 when it says nothing),
 * strictly: invalid bytes refuse the report rather than become U+FFFD in stored values.
 */
export function decodeReportXml(xml: Buffer): string {
  const head = xml.subarray(0, 200).toString('latin1');
  let label = 'utf-8';
  if (head.startsWith('\xfe\xff')) label = 'utf-16be';
  else if (head.startsWith('\xff\xfe')) label = 'utf-16le';
  else label = /^(?:\xef\xbb\xbf)?\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1] ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    throw new DmarcReportRefused('invalid_encoding', `the report declares an encoding this reader does not know: ${label}`);
  }
  try {
    return decoder.decode(xml);
  } catch {
    throw new DmarcReportRefused('invalid_encoding', `the report is not valid ${decoder.encoding}`);
  }
}

/**
 * Reads one aggregate report's XML (bytes, decoded here, or text). Streaming (saxes, a strict XML parser): a record is turned
 * into its value as it closes and its elements dropped, so memory follows one record, not the
 * report, and the record cap stops the parse where it is passed. The report is the first
 * `feedback` element, at any depth: what follows its end is ignored (some reporters wrap it in
 * an unclosed `xs:schema` element); within it, the XML must be well-formed. A DOCTYPE refuses
 * the report outright: no report needs one, and it is how entity bombs and external entities
 * (XXE) come; saxes expands no entity but XML's five and character references anyway.
 */
export function parseAggregateReport(xml: Buffer | string, limits: DmarcLimits = DMARC_LIMITS): AggregateReport {
  if (xml.length > limits.maxXmlBytes) throw new DmarcReportRefused('too_large', `the report is past ${limits.maxXmlBytes} ${typeof xml === 'string' ? 'characters' : 'bytes'}`);
  // A string is text already decoded (a mail body, by its MIME charset).
  const source = typeof xml === 'string' ? xml : decodeReportXml(xml);
  const parser = new SaxesParser({ xmlns: true, position: true });
  let schema: AggregateReport['schema'] = 'rfc7489';
  let inFeedback = false;
  let done = false;
  /** Open elements inside feedback; [0] is a child of feedback. */
  const stack: Node[] = [];
  let metadata: Node | undefined;
  let policy: Node | undefined;
  const records: ReportRecord[] = [];
  let recordCount = 0;

  parser.on('doctype', () => {
    throw new DmarcReportRefused('dtd_forbidden', 'the report has a DOCTYPE declaration');
  });
  parser.on('error', (e) => {
    if (done) return;
    throw new DmarcReportRefused('invalid_xml', `the report is not well-formed XML: ${e.message.slice(0, 200)}`);
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (done) return;
    if (!inFeedback) {
      if (tag.local === 'feedback') {
        inFeedback = true;
        if (tag.uri === RFC9990_NAMESPACE) schema = 'rfc9990';
      }
      return;
    }
    if (stack.length === 0 && tag.local === 'record' && ++recordCount > limits.maxRecords) {
      throw new DmarcReportRefused('too_many_records', `the report has more than ${limits.maxRecords} records`);
    }
    const node: Node = { name: tag.local, text: '', children: [] };
    stack.at(-1)?.children.push(node);
    stack.push(node);
  });
  parser.on('text', (t) => {
    const node = stack.at(-1);
    if (node && node.text.length < limits.maxTextLength) node.text += t.slice(0, limits.maxTextLength - node.text.length);
  });
  parser.on('closetag', () => {
    if (done || !inFeedback) return;
    const node = stack.pop();
    if (!node) {
      done = true; // </feedback>
      return;
    }
    if (stack.length > 0) return;
    if (node.name === 'report_metadata') metadata ??= node;
    else if (node.name === 'policy_published') policy ??= node;
    else if (node.name === 'record') records.push(readRecord(node));
  });

  try {
    parser.write(source);
    if (!done) parser.close();
  } catch (e) {
    if (e instanceof DmarcReportRefused) throw e;
    throw new DmarcReportRefused('invalid_xml', `the report is not well-formed XML: ${(e as Error).message.slice(0, 200)}`);
  }
  if (!inFeedback) throw new DmarcReportRefused('not_a_report', 'the XML has no <feedback> element');
  if (!done) throw new DmarcReportRefused('invalid_xml', 'the <feedback> element does not end');

  return {
    schema,
    orgName: text(metadata, 'org_name') ?? '',
    orgEmail: text(metadata, 'email'),
    extraContactInfo: text(metadata, 'extra_contact_info'),
    reportId: required(metadata, 'report_metadata', 'report_id'),
    begin: unixTime(required(metadata, 'report_metadata', 'date_range', 'begin'), 'date_range/begin'),
    end: unixTime(required(metadata, 'report_metadata', 'date_range', 'end'), 'date_range/end'),
    generator: text(metadata, 'generator'),
    errors: (metadata?.children ?? []).filter((c) => c.name === 'error').map((c) => c.text.trim()).filter(Boolean),
    policy: readPolicy(policy),
    records,
  };
}

function readPolicy(node: Node | undefined): PublishedPolicy {
  const pct = text(node, 'pct');
  return {
    domain: domainName(required(node, 'policy_published', 'domain')),
    p: keyword(node, 'p'),
    sp: keyword(node, 'sp'),
    np: keyword(node, 'np'),
    // A percentage: anything past 100 says nothing a reader could use (null, as if absent).
    pct: pct === null ? null : ((n) => (n <= 100 ? n : null))(wholeNumber(pct, 'policy_published/pct')),
    adkim: keyword(node, 'adkim'),
    aspf: keyword(node, 'aspf'),
    fo: text(node, 'fo'),
    testing: keyword(node, 'testing'),
    discoveryMethod: keyword(node, 'discovery_method'),
  };
}

function readRecord(node: Node): ReportRecord {
  const row = child(node, 'row');
  const sourceIp = required(row, 'record/row', 'source_ip');
  if (!isIP(sourceIp)) throw new DmarcReportRefused('invalid_value', `a record's source_ip is not an IP address: ${JSON.stringify(sourceIp.slice(0, 60))}`);
  const evaluated = child(row, 'policy_evaluated');
  // The pre-RFC drafts called the identifiers `identities`.
  const identifiers = child(node, 'identifiers') ?? child(node, 'identities');
  const auth = child(node, 'auth_results');
  const results = (name: 'dkim' | 'spf') => (auth?.children ?? []).filter((c) => c.name === name);
  return {
    // One text per address (IPv6 compressed, lower case; IPv4-mapped as IPv4): the sources listing groups by it.
    sourceIp: ipaddr.process(sourceIp).toString(),
    count: wholeNumber(required(row, 'record/row', 'count'), 'record/row/count'),
    disposition: keyword(evaluated, 'disposition'),
    dkim: keyword(evaluated, 'dkim'),
    spf: keyword(evaluated, 'spf'),
    reasons: (evaluated?.children ?? []).filter((c) => c.name === 'reason').map((r) => ({ type: keyword(r, 'type'), comment: text(r, 'comment') })),
    headerFrom: text(identifiers, 'header_from')?.toLowerCase() ?? null,
    envelopeFrom: text(identifiers, 'envelope_from')?.toLowerCase() ?? null,
    envelopeTo: text(identifiers, 'envelope_to')?.toLowerCase() ?? null,
    dkimResults: results('dkim').map((d) => ({ domain: text(d, 'domain')?.toLowerCase() ?? null, selector: text(d, 'selector'), result: keyword(d, 'result'), humanResult: text(d, 'human_result') })),
    spfResults: results('spf').map((s) => ({ domain: text(s, 'domain')?.toLowerCase() ?? null, scope: keyword(s, 'scope'), result: keyword(s, 'result'), humanResult: text(s, 'human_result') })),
  };
}
