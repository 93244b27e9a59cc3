import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Google Groups refusing a post, in many languages (formats/googlegroups.ts): a refused sender, soft. */
await formatCases(t, { groups: ['GoogleGroups'], format: /^GoogleGroups$/ });
