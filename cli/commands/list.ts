import { basename } from 'node:path';
import { UPLOAD_MODES } from '../../domain/lists/modes.js';
import { defineCommand, deletionCommand } from '../command.js';
import { runCsvFile } from '../csv-run.js';
import { oneOf, optional, positiveInteger, required, toggle, UsageError, type Parse } from '../flags.js';

const instance = required('slug', 'the instance');
const id = required('id', 'the list id', positiveInteger);

/** The list rules, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const lists = () => import('../../domain/lists/lists.js');

/** email:1,first_name:2: each column's field_key and its 1-based position in the CSV. */
const positioned: Parse<Array<{ key: string; position: number }>> = (text, flag) =>
  text.split(',').map((item) => {
    const [key = '', position = '', ...rest] = item.split(':');
    const n = Number(position);
    if (!key || rest.length || !/^[0-9]+$/.test(position) || !Number.isSafeInteger(n) || n < 1) {
      throw new UsageError(`${flag} must be a comma-separated list of field_key:position (from 1), e.g. email:1,first_name:2`);
    }
    return { key, position: n };
  });

export const listCommands = [
  defineCommand({
    name: 'list create',
    summary: 'Create a CSV list: each column a catalog field at a position of the file',
    flags: {
      instance,
      name: required('name', 'the name (unique ignoring case and accents)'),
      columns: optional('key:position,...', 'the columns, e.g. email:1,first_name:2 (without them no file can be uploaded)', positioned),
      'max-rows': optional('n', 'the most rows the list may hold (default 1000000)', positiveInteger),
    },
    run: async (ctx, f) =>
      (await lists()).createList(await ctx.tenant(f.instance), ctx.pool, { name: f.name, columns: f.columns ?? [], maxRows: f['max-rows'] }),
  }),
  defineCommand({
    name: 'list upload',
    summary: 'Upload a CSV file to a list: append its rows, or overwrite the list with them (all or nothing)',
    description:
      'Each declared column is read from its position and checked as a dataset contact value is; a row with an invalid value is refused ' +
      'to the rejects file. An append of a file the list already has (same SHA-256) is refused.',
    flags: {
      instance,
      id,
      file: required('path', 'the CSV file (UTF-8, comma-separated)'),
      mode: required(UPLOAD_MODES.join('|'), 'append adds rows; overwrite replaces every row', oneOf(UPLOAD_MODES)),
      header: toggle('the first row is a header: skip it'),
      rejects: optional('path', 'where refused rows go (default: the file name plus .rejected.csv)'),
    },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      return runCsvFile(f.file, f.rejects, 'uploading', ctx.terminal, async (run) => {
        // Loaded here: the CSV and COPY machinery is not needed to start any other command.
        const { uploadList } = await import('../../domain/lists/upload.js');
        return uploadList(tenant, ctx.pool, f.id, {
          open: run.open,
          fileName: basename(f.file),
          mode: f.mode,
          header: f.header,
          rejects: run.rejects,
          onProgress: run.onProgress,
          limits: ctx.config.csv,
        });
      });
    },
  }),
  defineCommand({
    name: 'list show',
    summary: 'Show a list: its columns, row count and live uploads',
    flags: { instance, id },
    run: async (ctx, f) => (await lists()).getList(await ctx.tenant(f.instance), ctx.pool, f.id),
  }),
  deletionCommand('list', {
    summary: 'Delete a list and its rows (its name is free again)',
    flags: { instance, id },
    remove: async (tenant, pool, f) => (await lists()).deleteList(tenant, pool, f.id),
  }),
];
