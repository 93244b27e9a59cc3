import { crc32, inflateRawSync } from 'node:zlib';
import yauzl from 'yauzl';
import { DMARC_LIMITS, type DmarcLimits } from './limits.js';
import { DmarcReportRefused } from './refusal.js';

/**
 * A report file as reporters send it: the XML itself, gzip (`.xml.gz`, RFC 7489 §7.2.1.1's
 * default) or zip (`.zip`, what Google, Microsoft and many others send). Told apart by their
 * first bytes, never by a file name or a Content-Type, which reporters get wrong.
 */
export type ReportFileKind = 'xml' | 'gzip' | 'zip';

export function reportFileKind(content: Buffer): ReportFileKind | undefined {
  if (content[0] === 0x1f && content[1] === 0x8b) return 'gzip';
  if (content.subarray(0, 4).equals(ZIP_LOCAL_HEADER)) return 'zip';
  // XML: a byte-order mark, white space, then '<'.
  const text = content.subarray(0, 64).toString('latin1').replace(/^(\xef\xbb\xbf|\xfe\xff|\xff\xfe)/, '').trimStart();
  return text.startsWith('<') ? 'xml' : undefined;
}

const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** The most a compressed file of this size may inflate to. */
function outputCap(compressedBytes: number, limits: DmarcLimits): number {
  return Math.min(limits.maxXmlBytes, Math.max(compressedBytes, 1) * limits.maxCompressionRatio);
}

function overCap(compressedBytes: number, limits: DmarcLimits): DmarcReportRefused {
  return limits.maxXmlBytes <= Math.max(compressedBytes, 1) * limits.maxCompressionRatio
    ? new DmarcReportRefused('too_large', `the report inflates past ${limits.maxXmlBytes} bytes`)
    : new DmarcReportRefused('compression_ratio', `the report inflates past ${limits.maxCompressionRatio} times its ${compressedBytes} compressed bytes`);
}

/** The XML files a report file holds: one for XML and gzip, each file of a zip. */
export async function unpackReportFile(content: Buffer, limits: DmarcLimits = DMARC_LIMITS): Promise<Buffer[]> {
  switch (reportFileKind(content)) {
    case 'xml':
      if (content.length > limits.maxXmlBytes) throw new DmarcReportRefused('too_large', `the report is ${content.length} bytes, past ${limits.maxXmlBytes}`);
      return [content];
    case 'gzip':
      return [gunzip(content, limits)];
    case 'zip':
      return unzip(content, limits);
    default:
      throw new DmarcReportRefused('not_a_report', 'neither XML, gzip nor zip');
  }
}

/**
 * RFC 1952 by hand around zlib's raw inflate, for two reasons: the output is capped while it
 * is made (maxOutputLength: a bomb is cut, not inflated whole), and bytes after the member are
 * ignored, as gzip(1) does, where Node's gunzip refuses them: Mimecast's reports end with a
 * stray CRLF. The CRC and length of the trailer are still checked.
 */
function gunzip(content: Buffer, limits: DmarcLimits): Buffer {
  const FEXTRA = 4, FNAME = 8, FCOMMENT = 16, FHCRC = 2;
  if (content.length < 18 || content[2] !== 8) throw new DmarcReportRefused('bad_archive', 'not a deflate gzip member');
  const flags = content[3]!;
  let at = 10;
  if (flags & FEXTRA) at += 2 + content.readUInt16LE(at);
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const end = content.indexOf(0, at);
    if (end < 0) throw new DmarcReportRefused('bad_archive', 'a gzip header without its end');
    at = end + 1;
  }
  if (flags & FHCRC) at += 2;
  const cap = outputCap(content.length, limits);
  let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    inflated = inflateRawSync(content.subarray(at), { maxOutputLength: cap, info: true }) as unknown as typeof inflated;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw overCap(content.length, limits);
    throw new DmarcReportRefused('bad_archive', `the gzip data does not inflate (${(e as Error).message})`);
  }
  const trailer = at + inflated.engine.bytesWritten;
  if (content.length < trailer + 8) throw new DmarcReportRefused('bad_archive', 'the gzip member ends early');
  const xml = inflated.buffer;
  if (content.readUInt32LE(trailer) !== crc32(xml) || content.readUInt32LE(trailer + 4) !== xml.length % 2 ** 32) {
    throw new DmarcReportRefused('bad_archive', "the gzip member's CRC or length does not match its data");
  }
  return xml;
}

/**
 * Each file of a zip, through yauzl: sizes are checked against the caps from the central
 * directory before a byte is inflated, and yauzl checks while inflating that no entry yields
 * more than it declared (validateEntrySizes), so a lying header cannot get past the caps.
 */
function unzip(content: Buffer, limits: DmarcLimits): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const refuse = (e: unknown) =>
      reject(e instanceof DmarcReportRefused ? e : new DmarcReportRefused('bad_archive', `the zip does not open (${(e as Error).message})`));
    yauzl.fromBuffer(content, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false, decodeStrings: true }, (err, zip) => {
      if (err || !zip) return refuse(err ?? new Error('no archive'));
      const files: Buffer[] = [];
      let total = 0;
      let seen = 0;
      zip.on('error', refuse);
      zip.on('end', () => (files.length ? resolve(files) : refuse(new DmarcReportRefused('not_a_report', 'the zip holds no file'))));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry(); // a folder
        if (++seen > limits.maxZipEntries) return refuse(new DmarcReportRefused('too_large', `the zip holds more than ${limits.maxZipEntries} files`));
        const cap = outputCap(entry.compressedSize, limits);
        if (entry.uncompressedSize > cap || total + entry.uncompressedSize > limits.maxXmlBytes) return refuse(overCap(entry.compressedSize, limits));
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return refuse(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', refuse);
          stream.on('end', () => {
            const file = Buffer.concat(chunks);
            total += file.length;
            files.push(file);
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
