import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CONSENT_CHANNELS, TERM_TYPES, type ConsentChannel } from '../../domain/consent/vocabulary.js';
import { AppError } from '../../domain/errors.js';
import { activationCommands, defineCommand } from '../command.js';
import { oneOf, optional, positiveInteger, required, UsageError, type Parse } from '../flags.js';
import { readText } from '../read-text.js';

const instance = required('slug', 'the instance');
const termId = required('id', 'the term id', positiveInteger);

/** The consent rules, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const terms = () => import('../../domain/consent/terms.js');
const purposes = () => import('../../domain/consent/purposes.js');
const proofs = () => import('../../domain/consent/proof.js');

/** A comma-separated list of distinct values, each read by `item` (`--purposes 1,2`). */
function listOf<V>(item: Parse<V>): Parse<V[]> {
  return (text, flag) => {
    const values = text.split(',').map((part) => item(part.trim(), flag));
    const repeated = values.find((v, i) => values.indexOf(v) !== i);
    if (repeated !== undefined) throw new UsageError(`${flag} repeats ${String(repeated)}`);
    return values;
  };
}

const activation = activationCommands('term', {
  flags: { instance, 'term-id': termId },
  set: async (tenant, pool, f, active) => (await terms()).setTermActive(tenant, pool, f['term-id'], active),
  deactivate: 'Deactivate a term: it receives no new consents (409 consent_term_inactive); prints the term',
  activate: 'Activate a term again; prints the term',
});

/**
 * The panel-only consent operations: purposes, terms and their versions (each printed as GET
 * /v1/consent-purposes or GET /v1/consent-terms shows it), and the proof export.
 */
export const consentCommands = [
  defineCommand({
    name: 'purpose create',
    summary: 'Create a consent purpose (what a consent is for); prints it with its id',
    description: 'Purposes are never edited or deleted: terms and past consents name them. Names are unique ignoring case and accents.',
    flags: { instance, name: required('name', 'the purpose name') },
    run: async (ctx, f) => (await purposes()).createPurpose(await ctx.tenant(f.instance), ctx.pool, { name: f.name }),
  }),
  defineCommand({
    name: 'term create',
    summary: 'Create a consent term for some purposes on some channels (fixed from then on); prints the term',
    description: 'The term has no version yet: publish one with term add-version and make it current with term set-current before registering consents.',
    flags: {
      instance,
      name: required('name', 'the term name (unique ignoring case and accents)'),
      type: required(TERM_TYPES.join('|'), 'the kind of term', oneOf(TERM_TYPES)),
      purposes: required('ids', 'comma-separated purpose ids, e.g. 1,2', listOf(positiveInteger)),
      channels: required('list', `comma-separated channels among ${CONSENT_CHANNELS.join(', ')}`, listOf(oneOf(CONSENT_CHANNELS))),
    },
    run: async (ctx, f) =>
      (await terms()).createTerm(await ctx.tenant(f.instance), ctx.pool, { name: f.name, type: f.type, purposeIds: f.purposes, channels: f.channels as ConsentChannel[] }),
  }),
  defineCommand({
    name: 'term add-version',
    summary: 'Publish a version of a term’s text (it does not become current); prints the term',
    flags: {
      instance,
      'term-id': termId,
      version: required('label', 'the version label, unique in the term (e.g. 2026-01)'),
      'body-file': required('path', 'the full legal text (UTF-8 file)'),
      'document-url': optional('url', 'where the text is published (http or https)'),
    },
    run: async (ctx, f) =>
      (await terms()).addTermVersion(await ctx.tenant(f.instance), ctx.pool, f['term-id'], {
        version: f.version,
        body: await readText(f['body-file'], '--body-file'),
        documentUrl: f['document-url'],
      }),
  }),
  defineCommand({
    name: 'term set-current',
    summary: 'Make a published version the current one (the one new consents freeze); prints the term',
    flags: { instance, 'term-id': termId, version: required('label', 'the version label') },
    run: async (ctx, f) => (await terms()).setCurrentVersion(await ctx.tenant(f.instance), ctx.pool, f['term-id'], f.version),
  }),
  activation.deactivate,
  activation.activate,
  defineCommand({
    name: 'consent proof',
    summary: 'Export the proof of consent of one contact (GDPR Art. 7(1)): the JSON of GET /v1/consent-events/proof',
    description:
      'The contact is matched exactly in its stored form (email addresses are stored lowercased). With --out the document is written to ' +
      'a new file (an existing one is never overwritten) and a summary with the file’s SHA-256 is printed; without it the document is printed.',
    flags: {
      instance,
      contact: required('identifier', 'the email address, phone number or uniquecode'),
      out: optional('file', 'write the document to this new file'),
    },
    run: async (ctx, f) => {
      const proof = await (await proofs()).consentProof(await ctx.tenant(f.instance), ctx.pool, f.contact);
      if (f.out === undefined) return proof;
      const text = JSON.stringify(proof, null, 2) + '\n';
      try {
        await writeFile(f.out, text, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        throw new AppError('file_unwritable', `--out ${f.out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      return {
        file: resolve(f.out),
        contact: proof.contact,
        events: proof.events.length,
        bytes: Buffer.byteLength(text, 'utf8'),
        sha256: createHash('sha256').update(text, 'utf8').digest('hex'),
      };
    },
  }),
];
