/**
 * The field catalog's vocabulary, once: the API schema, the CLI's flag checks, the validator and
 * the database's CHECK (sql/migrations/014_datasets.sql) hold these values.
 */
export const FIELD_TYPES = ['text', 'email', 'phone', 'number', 'date', 'boolean', 'select'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const FIELD_RULES = ['max_length', 'pattern', 'min', 'max'] as const;
export type FieldRule = (typeof FIELD_RULES)[number];

/**
 * Which rules each type takes. A length and a pattern are about text; a range about numbers;
 * email, phone and date have a fixed format already and boolean nothing to bound. A select's
 * values are its options.
 */
export const RULES_BY_TYPE: Record<FieldType, readonly FieldRule[]> = {
  text: ['max_length', 'pattern'],
  email: ['max_length'],
  phone: [],
  number: ['min', 'max'],
  date: [],
  boolean: [],
  select: [],
};

/** The system fields every instance has from the start (a trigger of migration 014 creates them). */
export const SYSTEM_FIELD_KEYS = ['email', 'phone'] as const;

/** field_key: what a column, a CSV mapping and a form item name a field by (the database's CHECK). */
export const FIELD_KEY_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;

/** A catalog field as validation needs it (the API shape is in catalog.ts). */
export interface FieldDefinition {
  id: number;
  key: string;
  type: FieldType;
  options: string[] | null;
  maxLength: number | null;
  pattern: string | null;
  min: number | null;
  max: number | null;
  isActive: boolean;
}
