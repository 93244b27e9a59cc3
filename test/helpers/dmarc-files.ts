import { readFileSync } from 'node:fs';
import { createGzip, crc32, deflateRawSync } from 'node:zlib';
import { corpusPath } from './corpus.js';

/**
 * For the DMARC tests (test/dmarc-reports.test.ts, test/dmarc-receiving.test.ts): the corpus
 * manifest, and report files as hostile senders make them.
 */

/** What the corpus manifest says a report holds (null: a file a strict reader refuses). */
export interface ManifestExpect {
  org_name: string;
  report_id: string;
  domain: string;
  message_count: number;
  dmarc_pass_count: number;
  records: number;
  schema: string;
}

export function dmarcManifest(): { reports: Array<{ file: string; expect: ManifestExpect | null }> } {
  return JSON.parse(readFileSync(corpusPath('dmarc', 'manifest.json'), 'utf8'));
}

/** A zip of one deflated file, its size declared as given (a lying header when `declared` is set). */
export function zipOf(name: string, data: Buffer, declared = data.length): Buffer {
  const deflated = deflateRawSync(data);
  const file = Buffer.from(name);
  // The fields a local header (at 14) and a central directory entry (at 16) share: CRC, sizes, name length.
  const header = (signature: number, size: number, common: number) => {
    const h = Buffer.alloc(size);
    h.writeUInt32LE(signature, 0);
    h.writeUInt32LE(crc32(data), common);
    h.writeUInt32LE(deflated.length, common + 4);
    h.writeUInt32LE(declared, common + 8);
    h.writeUInt16LE(file.length, common + 12);
    return h;
  };
  const local = header(0x04034b50, 30, 14);
  local.writeUInt16LE(20, 4); // version needed
  local.writeUInt16LE(8, 8); // deflate
  const central = header(0x02014b50, 46, 16);
  central.writeUInt16LE(20, 4); // version made by
  central.writeUInt16LE(20, 6); // version needed
  central.writeUInt16LE(8, 10); // deflate
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(46 + file.length, 12);
  end.writeUInt32LE(30 + file.length + deflated.length, 16);
  return Buffer.concat([local, file, deflated, central, file, end]);
}

/** A gzip of `megabytes` MB of zeros, made in a stream: the bomb is never whole in memory here either. */
export async function gzipBomb(megabytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => gzip.on('end', resolve));
  const mb = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < megabytes; i++) if (!gzip.write(mb)) await new Promise((r) => gzip.once('drain', r));
  gzip.end();
  await done;
  return Buffer.concat(out);
}

