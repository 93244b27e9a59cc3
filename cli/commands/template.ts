import { AppError } from '../../domain/errors.js';
import { defineCommand, deletionCommand } from '../command.js';
import { positiveInteger, required } from '../flags.js';
import { readText } from '../read-text.js';

/**
 * The template module is loaded by the template commands only: it brings the renderer (MJML and
 * the checks), about a second of start-up that every other command would otherwise pay.
 */
const templates = () => import('../../domain/templates/templates.js');

const instance = required('slug', 'the instance');
const id = required('id', 'the template id', positiveInteger);
const name = required('name', 'the template name (unique in the instance ignoring case and accents)');

export const templateCommands = [
  defineCommand({
    name: 'template publish',
    summary: 'Publish a template: sendable outside test_mode, no longer editable by the API',
    flags: { instance, id },
    run: async (ctx, f) => (await templates()).setTemplateStatus(await ctx.tenant(f.instance), ctx.pool, f.id, 'public'),
  }),
  defineCommand({
    name: 'template unpublish',
    summary: 'Return a published template to draft, editable again by the API',
    flags: { instance, id },
    run: async (ctx, f) => (await templates()).setTemplateStatus(await ctx.tenant(f.instance), ctx.pool, f.id, 'draft'),
  }),
  deletionCommand('template', {
    summary: 'Delete a template (its name is free again; sends already accepted keep their content)',
    flags: { instance, id },
    remove: async (tenant, pool, f) => (await templates()).deleteTemplate(tenant, pool, f.id),
  }),
  defineCommand({
    name: 'template import-external',
    summary: 'Import the HTML of an editor no longer offered as a draft template (provider external: never editable)',
    flags: { instance, name, 'html-file': required('path', 'the HTML file (UTF-8)') },
    run: async (ctx, f) =>
      (await templates()).importExternalTemplate(await ctx.tenant(f.instance), ctx.pool, { name: f.name, html: await readText(f['html-file'], '--html-file') }),
  }),
  defineCommand({
    name: 'template import',
    summary: 'Create a native draft template from a Beefree design document (a JSON file)',
    description: 'The document is checked and rendered as POST /v1/mail-templates does; an error names each refused node.',
    flags: { instance, name, file: required('path', 'the design document (JSON, as Beefree saves it)') },
    run: async (ctx, f) => {
      const text = await readText(f.file, '--file');
      let config: unknown;
      try {
        config = JSON.parse(text);
      } catch (err) {
        throw new AppError('invalid_document', `--file ${f.file} is not JSON: ${(err as Error).message}`);
      }
      if (config === null || typeof config !== 'object' || Array.isArray(config)) {
        throw new AppError('invalid_document', `--file ${f.file} must hold a JSON object (the design document)`);
      }
      // The panel's own editor: TEMPLATE_EDITOR governs creation by API only.
      const { createTemplate } = await templates();
      return createTemplate(await ctx.tenant(f.instance), ctx.pool, { name: f.name, config }, { editor: 'on' });
    },
  }),
];
