import type { JsonSchema } from '../../domain/validation.js';
import { PANEL_ROLES } from '../../domain/panel/roles.js';
import { dateTime } from './common.js';

/** The operator panel's /v1/private resources (docs/panel.md). */

const role = { type: 'string', enum: [...PANEL_ROLES], description: 'viewer reads; admin also writes; owner also manages members and keys' } as const satisfies JsonSchema;

// No format on the address: a malformed one is a failed login like any other (401), not a 422.
export const loginSchema = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 320 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const satisfies JsonSchema;

const sessionUser: JsonSchema = {
  type: 'object',
  required: ['id', 'email'],
  properties: { id: { type: 'integer' }, email: { type: 'string' } },
};

export const sessionSchema: JsonSchema = {
  type: 'object',
  required: ['token', 'expires_at', 'user'],
  properties: {
    token: { type: 'string', description: 'crtsess_ and 43 base64url characters; shown once, stored only as its SHA-256' },
    expires_at: { ...dateTime, description: 'When the session ends if unused; each authenticated request moves it PANEL_SESSION_TTL_SECONDS ahead, never past PANEL_SESSION_MAX_AGE_SECONDS after the login' },
    user: sessionUser,
  },
};

export const memberInstanceSchema: JsonSchema = {
  type: 'object',
  required: ['slug', 'name', 'role', 'enabled'],
  properties: { slug: { type: 'string' }, name: { type: 'string' }, role, enabled: { type: 'boolean' } },
};

export const memberInstancesSchema: JsonSchema = { type: 'object', required: ['data'], properties: { data: { type: 'array', items: memberInstanceSchema } } };

export const memberSchema: JsonSchema = {
  type: 'object',
  required: ['user_id', 'email', 'role', 'status', 'disabled', 'created_at', 'updated_at'],
  properties: {
    user_id: { type: 'integer' },
    email: { type: 'string' },
    role,
    status: { type: 'string', enum: ['member'] },
    disabled: { type: 'boolean', description: 'The user is disabled (cartero user disable): still a member, unable to sign in' },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

/** A pending invitation as the instance sees it: by address only, never a user id (docs/panel.md, Invitations). */
export const invitationSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'role', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer', description: 'The invitation (DELETE /v1/private/members/invitations/{invitation_id} withdraws it)' },
    email: { type: 'string' },
    role,
    status: { type: 'string', enum: ['invited'], description: 'Not a member until the person of this address accepts in the panel' },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

export const membersSchema: JsonSchema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', description: 'The members (status member), then the pending invitations (status invited)', items: { oneOf: [memberSchema, invitationSchema] } } },
};

export const memberCreateSchema = {
  type: 'object',
  required: ['email', 'role'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', format: 'email', minLength: 1, maxLength: 320, description: 'The address to invite; it need not have a panel user yet' },
    role,
  },
} as const satisfies JsonSchema;

/** An invitation as its invitee sees it (GET /v1/private/invitations). */
export const receivedInvitationsSchema: JsonSchema = {
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'instance', 'role', 'created_at'],
        properties: {
          id: { type: 'integer' },
          instance: { type: 'object', required: ['slug', 'name'], properties: { slug: { type: 'string' }, name: { type: 'string' } } },
          role,
          created_at: dateTime,
        },
      },
    },
  },
};

export const memberPatchSchema = {
  type: 'object',
  required: ['role'],
  additionalProperties: false,
  properties: { role },
} as const satisfies JsonSchema;
