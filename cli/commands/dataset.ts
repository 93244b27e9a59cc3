import { DATASET_CHANNELS, type ColumnInput, type DatasetChannel } from '../../domain/datasets/declaration.js';
import { CONNECTED_FORMS_CHOICES } from '../../domain/forms/dataset-columns.js';
import type { ImportColumn } from '../../domain/datasets/import.js';
import { activationCommands, defineCommand } from '../command.js';
import { runCsvFile } from '../csv-run.js';
import { oneOf, optional, positiveInteger, required, UsageError, type Parse } from '../flags.js';

const instance = required('slug', 'the instance');
const id = required('id', 'the dataset id', positiveInteger);

/** The dataset rules, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const datasets = () => import('../../domain/datasets/datasets.js');

/** mail,sms: the channels; `none` declares no channel (the identity field must then be given). */
const channels: Parse<DatasetChannel[] | null> = (text, flag) => {
  if (text === 'none') return null;
  return text.split(',').map((ch) => oneOf(DATASET_CHANNELS, `a comma-separated list of ${DATASET_CHANNELS.join(', ')} (or none)`)(ch, flag));
};

/** email:required,first_name: each column by field_key, required when it says so. */
const columns: Parse<ColumnInput[]> = (text, flag) =>
  text.split(',').map((item) => {
    const [key = '', mark, ...rest] = item.split(':');
    if (!key || rest.length || (mark !== undefined && mark !== 'required')) {
      throw new UsageError(`${flag} must be a comma-separated list of field_key or field_key:required, e.g. email:required,first_name`);
    }
    return { key, required: mark === 'required' };
  });

/** col=field_key,col2=skip: how each named CSV column is read ('col=' maps it to no field: refused). */
const columnMap: Parse<ImportColumn[]> = (text, flag) =>
  text.split(',').map((item) => {
    const at = item.indexOf('=');
    if (at < 1) throw new UsageError(`${flag} must be a comma-separated list of column=field_key or column=skip`);
    const column = item.slice(0, at);
    const target = item.slice(at + 1);
    return target === 'skip' ? { column, action: 'skip' } : { column, action: 'map', field: target || undefined };
  });

const CHANNEL_HELP = `${DATASET_CHANNELS.join('|')}[,...]|none`;

const activation = activationCommands('dataset', {
  flags: { instance, id },
  set: async (tenant, pool, f, active) => (await datasets()).setDatasetActive(tenant, pool, f.id, active),
  deactivate: 'Deactivate a dataset: no longer offered to forms; it still receives contacts',
  activate: 'Reactivate a dataset',
});

export const datasetCommands = [
  defineCommand({
    name: 'dataset create',
    summary: 'Create a dataset (printed as GET /v1/datasets/{id} shows it)',
    description:
      'With exactly one channel the identifier is fixed (mail: email; sms, wsp: phone); with several or none, --identity-field names it. ' +
      'The columns must include the identity field.',
    flags: {
      instance,
      name: required('name', 'the name (unique ignoring case and accents)'),
      channel: optional(CHANNEL_HELP, 'the enabled channels', channels),
      'identity-field': optional('key', 'the field_key contacts are recognised by (several channels or none)'),
      columns: required('key[:required],...', 'the columns by field_key, e.g. email:required,first_name', columns),
      description: optional('text', 'free text'),
    },
    run: async (ctx, f) =>
      (await datasets()).createDataset(await ctx.tenant(f.instance), ctx.pool, {
        name: f.name,
        channel: f.channel ?? null,
        identityField: f['identity-field'] ?? null,
        columns: f.columns,
        description: f.description ?? null,
      }),
  }),
  defineCommand({
    name: 'dataset update',
    summary: 'Change a dataset: each flag given replaces that part, the rest stay',
    description:
      '--columns replaces the whole declaration. The identity field cannot change once the dataset holds contacts. ' +
      'A change that makes a column required which a connected form does not collect as a required item is refused ' +
      '(dataset_columns_not_collected_by_forms) unless --connected-forms says align (those forms get the item, required) or keep (they stay as they are).',
    flags: {
      instance,
      id,
      name: optional('name', 'the new name'),
      channel: optional(CHANNEL_HELP, 'the enabled channels', channels),
      'identity-field': optional('key', 'the field_key contacts are recognised by'),
      columns: optional('key[:required],...', 'the whole new column declaration', columns),
      description: optional('text', "free text ('' empties it)"),
      'connected-forms': optional(CONNECTED_FORMS_CHOICES.join('|'), 'connected forms left short by the change: align them or keep them as they are', oneOf(CONNECTED_FORMS_CHOICES)),
    },
    run: async (ctx, f) =>
      (await datasets()).updateDataset(await ctx.tenant(f.instance), ctx.pool, f.id, {
        name: f.name,
        channel: f.channel,
        identityField: f['identity-field'],
        columns: f.columns,
        description: f.description,
        connectedForms: f['connected-forms'],
      }),
  }),
  activation.deactivate,
  activation.activate,
  defineCommand({
    name: 'dataset import',
    summary: 'Import a CSV file of contacts into a dataset (one transaction: all or nothing)',
    description:
      'The first row is the header; a column maps to the field named like its header unless --map says otherwise. ' +
      'Each row is checked as POST /v1/datasets/{id}/contacts checks a contact and upserted by the identifier; refused rows go to the ' +
      'rejects file with their reason. Prints a summary: rows, accepted, rejected, created, updated, unchanged, duplicates, first_rejects.',
    flags: {
      instance,
      id,
      file: required('path', 'the CSV file (UTF-8, comma-separated, header row first)'),
      map: optional('col=field_key,col2=skip', 'how named columns are read: into a field, or skipped', columnMap),
      rejects: optional('path', 'where the refused rows go (default: the file name plus .rejected.csv)'),
    },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      return runCsvFile(f.file, f.rejects, 'reading', ctx.terminal, async (run) => {
        // Loaded here: the CSV and COPY machinery is not needed to start any other command.
        const { importContacts } = await import('../../domain/datasets/import.js');
        return importContacts(tenant, ctx.pool, f.id, { input: run.open(), map: f.map, rejects: run.rejects, onProgress: run.onProgress, onMerge: run.onMerge, limits: ctx.config.csv });
      });
    },
  }),
];
