import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';

/**
 * The messages the mailbox simulator stored ($DATA_DIR/mailbox/*.eml), found by the
 * X-Cartero-Mail-Id header the worker puts on every mail (`<mail_id>.<report tag>`), and the links
 * a reader's mail client would follow in them: the demo opens and clicks what was delivered.
 */

export interface Delivered {
  mailId: string;
  file: string;
  subject: string;
  /** The open pixel's URL (…/t/o/{token}), if the mail is tracked. */
  openUrl?: string;
  /** Tracked links (…/t/c/{token}) in document order. */
  clickUrls: string[];
  /** Every http(s) link of the text part (a confirmation link is there). */
  textLinks: string[];
}

/** Mail id → stored file, for every complete .eml (the simulator's dot-named temporary files are skipped). */
async function storedFiles(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (!existsSync(dir)) return found;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.eml') || name.startsWith('.')) continue;
    const file = join(dir, name);
    // The header block is at most a few KB: read the start only to match the id.
    const head = (await readFile(file)).subarray(0, 16_384).toString('utf8');
    const id = /^X-Cartero-Mail-Id:\s*([^.\s]+)/im.exec(head)?.[1];
    if (id && !found.has(id)) found.set(id, file);
  }
  return found;
}

/** The stored message of each of these mails that has arrived (parsed, its links read). */
export async function deliveredMails(dir: string, mailIds: readonly string[]): Promise<Map<string, Delivered>> {
  const files = await storedFiles(dir);
  const out = new Map<string, Delivered>();
  for (const mailId of mailIds) {
    const file = files.get(mailId);
    if (!file) continue;
    const parsed = await simpleParser(await readFile(file));
    const html = typeof parsed.html === 'string' ? parsed.html : '';
    const hrefs = [...html.matchAll(/\b(?:href|src)="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
    out.set(mailId, {
      mailId,
      file,
      subject: parsed.subject ?? '',
      openUrl: hrefs.find((u) => /\/t\/o\/[^/?#]+$/.test(u)),
      clickUrls: [...new Set(hrefs.filter((u) => /\/t\/c\/[^/?#]+$/.test(u)))],
      textLinks: [...(parsed.text ?? '').matchAll(/https?:\/\/[^\s<>"]+/g)].map((m) => m[0]),
    });
  }
  return out;
}
