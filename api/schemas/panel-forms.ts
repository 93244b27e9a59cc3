import { formDefinitionSchema } from '../../domain/forms/definition-schema.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, nullableDateTime, resourceId } from './common.js';

/**
 * The panel-only form operations' bodies (docs/panel.md, Forms): the definition file of `cartero
 * form create|update --file` (domain/forms/definition-schema.ts), plus the command's
 * --align-dataset-columns as a body property (`form activate|deactivate` is the is_active body of
 * api/routes/panel/activation.ts, shared with terms and fields).
 */

const definitionProperties = (formDefinitionSchema as { properties: Record<string, JsonSchema> }).properties;

export const formWriteSchema: JsonSchema = {
  ...formDefinitionSchema,
  properties: {
    ...definitionProperties,
    align_dataset_columns: {
      type: 'boolean',
      description:
        'Make the items the fed dataset requires required (adding those absent, at the end) instead of refusing with 409 form_dataset_columns_not_collected.',
    },
  },
};

export const formDeletedSchema: JsonSchema = closedObject({ id: resourceId, deleted: { type: 'boolean', enum: [true] } });

export const submissionRowSchema: JsonSchema = closedObject({
  id: resourceId,
  source: { type: 'string', enum: ['form', 'form_api'], description: 'form: the hosted page; form_api: POST /v1/forms/{id}/submissions.' },
  status: { type: 'string', enum: ['pending', 'confirmed'] },
  field_values: { type: 'object', description: 'The values collected, by field_key.' },
  consents: {
    type: 'array',
    items: closedObject({ event_id: resourceId, term_id: resourceId, term_version_id: resourceId, status: { type: 'string', enum: ['confirmed', 'pending', 'expired'] } }),
  },
  created_at: dateTime,
  confirmed_at: nullableDateTime,
});

export const mailSettingsSchema: JsonSchema = closedObject({
  auto_reply: definitionProperties['auto_reply']!,
  team_notice_emails: { type: 'array', items: { type: 'string' } },
});

export const formPreviewSchema: JsonSchema = closedObject({
  html: { type: 'string', description: 'The hosted page (GET /f/{public_token}) as it would be drawn for this definition, its Send button disabled.' },
});
