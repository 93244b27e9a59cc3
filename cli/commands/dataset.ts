import { createDataset, setDatasetActive, updateDataset } from '../../domain/datasets/datasets.js';
import { DATASET_CHANNELS, type ColumnInput, type DatasetChannel } from '../../domain/datasets/declaration.js';
import { defineCommand } from '../command.js';
import { oneOf, optional, positiveInteger, required, UsageError, type Parse } from '../flags.js';

const instance = required('slug', 'the instance');
const id = required('id', 'the dataset id', positiveInteger);

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

const CHANNEL_HELP = `${DATASET_CHANNELS.join('|')}[,...]|none`;

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
      createDataset(await ctx.tenant(f.instance), ctx.pool, {
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
    description: '--columns replaces the whole declaration. The identity field cannot change once the dataset holds contacts.',
    flags: {
      instance,
      id,
      name: optional('name', 'the new name'),
      channel: optional(CHANNEL_HELP, 'the enabled channels', channels),
      'identity-field': optional('key', 'the field_key contacts are recognised by'),
      columns: optional('key[:required],...', 'the whole new column declaration', columns),
      description: optional('text', "free text ('' empties it)"),
    },
    run: async (ctx, f) =>
      updateDataset(await ctx.tenant(f.instance), ctx.pool, f.id, {
        name: f.name,
        channel: f.channel,
        identityField: f['identity-field'],
        columns: f.columns,
        description: f.description,
      }),
  }),
  defineCommand({
    name: 'dataset deactivate',
    summary: 'Deactivate a dataset: no longer offered to forms; it still receives contacts',
    flags: { instance, id },
    run: async (ctx, f) => setDatasetActive(await ctx.tenant(f.instance), ctx.pool, f.id, false),
  }),
  defineCommand({
    name: 'dataset activate',
    summary: 'Reactivate a dataset',
    flags: { instance, id },
    run: async (ctx, f) => setDatasetActive(await ctx.tenant(f.instance), ctx.pool, f.id, true),
  }),
];
