import type { ParsedMail } from 'mailparser';
import { DMARC_LIMITS, type DmarcLimits } from './limits.js';
import { parseAggregateReport } from './parse.js';
import { DmarcReportRefused } from './refusal.js';
import type { AggregateReport } from './report.js';
import { reportFileKind, unpackReportFile } from './unpack.js';

/** What one report file of a mail gave: a report, or why it was not read. `file` names it in logs. */
export type ReportReading = { file: string; report: AggregateReport } | { file: string; refused: DmarcReportRefused };

/**
 * The aggregate reports of one mail, each read on its own (a refused one does not hide the
 * others). A report travels as an attachment (`.xml`, `.xml.gz`, `.zip`, under whatever
 * Content-Type: reporters send application/octet-stream, application/x-zip-compressed...) or,
 * with some reporters, as the body itself. Attachments are recognised by their first bytes;
 * the body is read only when no attachment is a report.
 */
export async function readReportMail(parsed: ParsedMail, limits: DmarcLimits = DMARC_LIMITS): Promise<ReportReading[]> {
  const readings: ReportReading[] = [];
  const add = (file: string, read: () => AggregateReport) => {
    if (readings.length >= limits.maxReportsPerMail) return;
    try {
      readings.push({ file, report: read() });
    } catch (e) {
      if (!(e instanceof DmarcReportRefused)) throw e;
      readings.push({ file, refused: e });
    }
  };
  const attachments = parsed.attachments.filter((a) => reportFileKind(a.content) !== undefined);
  for (const [i, attachment] of attachments.entries()) {
    const name = attachment.filename ?? `attachment ${i + 1}`;
    let files: Buffer[];
    try {
      files = await unpackReportFile(attachment.content, limits);
    } catch (e) {
      if (!(e instanceof DmarcReportRefused)) throw e;
      add(name, () => {
        throw e;
      });
      continue;
    }
    files.forEach((xml, n) => add(files.length > 1 ? `${name} #${n + 1}` : name, () => parseAggregateReport(xml, limits)));
  }
  const body = parsed.text?.trimStart();
  if (!attachments.length && body?.startsWith('<')) add('the body', () => parseAggregateReport(body, limits));
  return readings;
}
