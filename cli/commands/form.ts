import { AppError } from '../../domain/errors.js';
import type { FormDefinitionInput } from '../../domain/forms/definition.js';
import type { Validator } from '../../domain/validation.js';
import { activationCommands, defineCommand } from '../command.js';
import { positiveInteger, required, toggle } from '../flags.js';
import { readText } from '../read-text.js';

const instance = required('slug', 'the instance');
const id = required('id', 'the form id', positiveInteger);
const file = required('path', 'the form definition, a JSON file (docs/forms.md)');
const align = toggle('make the items the dataset requires required (adding those absent) instead of refusing (form_dataset_columns_not_collected)');

/** The form rules, loaded by the form command that runs (cli/commands/index.ts). */
const forms = () => import('../../domain/forms/definition.js');

/**
 * The definition file's shape is checked by the same JSON Schema machinery as the API's bodies,
 * compiled when a command reads a file: Ajv and the compile are no part of any other command's start.
 */
let checkDefinition: Validator<FormDefinitionInput> | undefined;
async function definitionChecker(): Promise<Validator<FormDefinitionInput>> {
  if (!checkDefinition) {
    const [{ compile }, { formDefinitionSchema }] = await Promise.all([import('../../domain/validation.js'), import('../../domain/forms/definition-schema.js')]);
    checkDefinition = compile<FormDefinitionInput>(formDefinitionSchema, 'json');
  }
  return checkDefinition;
}

async function readDefinition(path: string): Promise<FormDefinitionInput> {
  const text = await readText(path, '--file');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new AppError('file_not_json', `--file ${path}: ${(err as Error).message}`);
  }
  return (await definitionChecker())(json);
}

const activation = activationCommands('form', {
  flags: { instance, id },
  set: async (tenant, pool, f, active) => (await forms()).setFormActive(tenant, pool, f.id, active),
  deactivate: 'Deactivate a form: submissions answer 404 form_not_found, as for a missing form',
  activate: 'Activate a form: it accepts submissions again',
});

/** The panel-only form operations; each prints the form as GET /v1/forms/{id} shows it. */
export const formCommands = [
  defineCommand({
    name: 'form create',
    summary: 'Create a form from a JSON definition file; prints it as GET /v1/forms/{id} shows it',
    description:
      'The file: name, kind (consent|advanced), type (registration|update), dataset_id, requires_confirmation, auto_reply_sender_id, ' +
      'auto_reply {subject, html, text | template_id}, team_notice_emails, settings, is_default, is_active and the ordered items ' +
      '(field: field_key, label, required; consent: term_id, channel, label, required; separator; text: text). Refusals: ' +
      'form_name_taken, consent_channel_not_covered, form_confirmation_email_missing, form_dataset_columns_not_collected, validation_error.',
    flags: { instance, file, 'align-dataset-columns': align },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      return (await forms()).createForm(tenant, ctx.pool, await readDefinition(f.file), { alignDatasetColumns: f['align-dataset-columns'] });
    },
  }),
  defineCommand({
    name: 'form update',
    summary: 'Replace a form’s definition with a JSON file; items that carry their id keep it',
    description: 'Items without an id are new; items of the form the file leaves out are removed. A rename renames the form in its consent events too.',
    flags: { instance, id, file, 'align-dataset-columns': align },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      return (await forms()).updateForm(tenant, ctx.pool, f.id, await readDefinition(f.file), { alignDatasetColumns: f['align-dataset-columns'] });
    },
  }),
  activation.activate,
  activation.deactivate,
  defineCommand({
    name: 'form delete',
    summary: 'Delete a form: gone from listings, no submissions; its submissions and consent events keep naming it',
    flags: { instance, id },
    run: async (ctx, f) => (await forms()).deleteForm(await ctx.tenant(f.instance), ctx.pool, f.id),
  }),
];
