import type { FieldErrorCode } from '../errors.js';
import { isEmailAddress } from '../email-address.js';

/**
 * The consent vocabulary, once: the API's schemas, the CLI's flag checks and the domain read
 * these lists (the database's CHECKs in sql/migrations/013_consent.sql hold the same values).
 */
export const CONSENT_CHANNELS = ['mail', 'sms', 'wsp', 'call', 'push'] as const;
export type ConsentChannel = (typeof CONSENT_CHANNELS)[number];

export const CONTACT_TYPES = ['email_address', 'phone_number', 'uniquecode'] as const;
export type ContactType = (typeof CONTACT_TYPES)[number];

export const TERM_TYPES = ['data_processing', 'service_terms', 'marketing', 'subscription', 'other'] as const;
export type TermType = (typeof TERM_TYPES)[number];

export const CONSENT_METHODS = ['single_opt_in', 'double_opt_in'] as const;
export type ConsentMethod = (typeof CONSENT_METHODS)[number];

export const CONSENT_ACTIONS = ['allow', 'deny'] as const;
export type ConsentAction = (typeof CONSENT_ACTIONS)[number];

export const EVENT_STATUSES = ['confirmed', 'pending', 'expired'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const EVENT_SOURCES = ['form', 'api', 'import', 'system'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

export const VERDICTS = ['allowed', 'denied', 'no_consent'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * Which identifier may carry consent on which channel (409 consent_contact_type_channel_mismatch
 * otherwise): an email address reaches mail only, a phone number sms, wsp and call; a uniquecode
 * (the integrator's own customer code) names a person whatever the channel, and is the only
 * identifier of push.
 */
export const CHANNEL_CONTACT_TYPES: Record<ConsentChannel, readonly ContactType[]> = {
  mail: ['email_address', 'uniquecode'],
  sms: ['phone_number', 'uniquecode'],
  wsp: ['phone_number', 'uniquecode'],
  call: ['phone_number', 'uniquecode'],
  push: ['uniquecode'],
};

export function contactTypeFits(channel: ConsentChannel, type: ContactType): boolean {
  return CHANNEL_CONTACT_TYPES[channel].includes(type);
}

/** A phone number in E.164 (+ and 8 to 15 digits), the one form stored, so it compares exactly. */
const E164 = /^\+[1-9][0-9]{7,14}$/;

/** Longest identifier (an email address's own maximum). */
export const MAX_CONTACT_LENGTH = 320;

/**
 * The stored form of an identifier (spec: email addresses lowercased, uniquecode as sent; phone
 * numbers must already be E.164), or why it is not one: the code of a 422 item.
 */
export function storedContact(type: ContactType, contact: string): { contact: string } | { code: FieldErrorCode; message: string } {
  switch (type) {
    case 'email_address':
      return isEmailAddress(contact) && contact === contact.trim()
        ? { contact: contact.toLowerCase() }
        : { code: 'value_error.email', message: 'An email_address contact must be an email address' };
    case 'phone_number':
      return E164.test(contact)
        ? { contact }
        : { code: 'value_error.phone_number', message: 'A phone_number contact must be in E.164 form: + and 8 to 15 digits, e.g. +34600111222' };
    case 'uniquecode':
      return { contact };
  }
}

/**
 * The form an identifier is compared in when reading (resolve): emails lowercased, the rest as
 * given. Unlike storedContact it never refuses: a malformed identifier simply matches nothing.
 */
export function comparedContact(type: ContactType, contact: string): string {
  return type === 'email_address' ? contact.toLowerCase() : contact;
}
