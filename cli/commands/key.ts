import { defineCommand } from '../command.js';
import { isoDateTime, optional, repeatable, required } from '../flags.js';

/** The API key rules, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const apiKeys = () => import('../../domain/tenancy/api-keys.js');

export const keyCommands = [
  defineCommand({
    name: 'key create',
    summary: 'Create an API key; prints the full key once',
    flags: {
      instance: required('slug', 'the instance the key belongs to'),
      scopes: required('a,b,c', 'comma-separated scopes, e.g. mail:send,mail:read'),
      'allow-ip': repeatable('cidr', 'a network the key may be used from (default: any)'),
      'expires-at': optional('iso', 'ISO 8601 date-time after which the key is refused', isoDateTime),
    },
    run: async (ctx, f) =>
      (await apiKeys()).createApiKey(ctx.pool, {
        instanceSlug: f.instance,
        scopes: f.scopes.split(',').map((s) => s.trim()).filter(Boolean),
        allowCidrs: f['allow-ip'],
        expiresAt: f['expires-at'] ?? null,
      }),
  }),
  defineCommand({
    name: 'key revoke',
    summary: 'Revoke an API key (it gets 401 from then on)',
    flags: { 'key-id': required('key-id', 'the key_id printed by key create') },
    run: async (ctx, f) => (await apiKeys()).revokeApiKey(ctx.pool, f['key-id']),
  }),
];
