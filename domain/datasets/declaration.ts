import type { Client } from '../../sql/pool.js';
import { AppError, RuleViolation } from '../errors.js';
import { fieldsByKey } from '../fields/catalog.js';
import type { FieldDefinition, FieldType } from '../fields/types.js';
import type { Tenant } from '../tenancy/context.js';

/** A dataset's channels (spec: Dataset.channel). */
export const DATASET_CHANNELS = ['mail', 'sms', 'wsp'] as const;
export type DatasetChannel = (typeof DATASET_CHANNELS)[number];

/** With exactly one channel, the channel decides the identifier (spec): its system field. */
const CHANNEL_IDENTITY: Record<DatasetChannel, string> = { mail: 'email', sms: 'phone', wsp: 'phone' };

/** Types whose values name one contact; a boolean, a date or a select value cannot. */
const IDENTITY_TYPES: readonly FieldType[] = ['text', 'email', 'phone', 'number'];

export interface ColumnInput {
  key: string;
  required: boolean;
}

/** What the panel declares: channels, an identity field (needed unless one channel), the columns. */
export interface DeclarationInput {
  channel: DatasetChannel[] | null;
  identityField: string | null;
  columns: ColumnInput[];
}

/** As stored: datasets.identity_field_id and datasets.columns (sql/migrations/014). */
export interface Declaration {
  channel: DatasetChannel[] | null;
  identityFieldId: number;
  columns: Array<{ field_id: number; required: boolean }>;
}

/**
 * Checks a declaration against the catalog and resolves it to field ids, in the order a reader
 * of the declaration would find the problems: the channels, then each column (repeated:
 * dataset_field_duplicated; not a live active catalog field: dataset_field_not_found), then the
 * identifier (none decidable: dataset_identity_field_required; not among the columns:
 * dataset_identity_field_missing). A deactivated field cannot be declared anew, but one the
 * dataset already declares (`declared`, field ids) stays declarable: deactivating a field does
 * not lock the datasets that use it.
 */
export async function resolveDeclaration(
  tenant: Tenant,
  c: Client,
  input: DeclarationInput,
  declared: ReadonlySet<number> = new Set(),
): Promise<Declaration> {
  const channel = input.channel && input.channel.length ? input.channel : null;
  if (channel) {
    const unknown = channel.filter((ch) => !(DATASET_CHANNELS as readonly string[]).includes(ch));
    if (unknown.length) throw new AppError('invalid_channel', `unknown channel ${unknown.join(', ')} (known: ${DATASET_CHANNELS.join(', ')})`);
    if (new Set(channel).size !== channel.length) throw new AppError('invalid_channel', 'a channel is repeated');
  }
  const seen = new Set<string>();
  for (const column of input.columns) {
    if (seen.has(column.key)) throw new RuleViolation('dataset_field_duplicated', `the columns declare ${column.key} more than once`);
    seen.add(column.key);
  }
  const identityKey = identityFieldKey(channel, input.identityField);
  const fields = await fieldsByKey(tenant, c, [...seen, identityKey]);
  const usable = (key: string): FieldDefinition => {
    const field = fields.get(key);
    if (!field) throw new RuleViolation('dataset_field_not_found', `${key} is not a field of the catalog`);
    if (!field.isActive && !declared.has(field.id)) throw new RuleViolation('dataset_field_not_found', `${key} is a deactivated field of the catalog`);
    return field;
  };
  for (const column of input.columns) usable(column.key);
  const identity = usable(identityKey);
  if (!IDENTITY_TYPES.includes(identity.type)) {
    throw new AppError('invalid_identity_field', `a ${identity.type} field cannot identify contacts (use a ${IDENTITY_TYPES.join(', ')} field)`);
  }
  if (!seen.has(identityKey)) {
    throw new RuleViolation('dataset_identity_field_missing', `the columns leave out the identity field ${identityKey}`);
  }
  return {
    channel,
    identityFieldId: identity.id,
    columns: input.columns.map((column) => ({ field_id: fields.get(column.key)!.id, required: column.required })),
  };
}

function identityFieldKey(channel: DatasetChannel[] | null, declared: string | null): string {
  if (channel?.length === 1) {
    const fixed = CHANNEL_IDENTITY[channel[0]!];
    if (declared !== null && declared !== fixed) {
      throw new AppError('invalid_identity_field', `a ${channel[0]} dataset identifies contacts by ${fixed}; leave the identity field out or name ${fixed}`);
    }
    return fixed;
  }
  if (declared === null) {
    throw new RuleViolation(
      'dataset_identity_field_required',
      `a dataset with ${channel ? 'several channels' : 'no channel'} must declare its identity field`,
    );
  }
  return declared;
}
