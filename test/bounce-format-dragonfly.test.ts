import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** DragonFly Mail Agent's bounces (formats/dragonfly.ts). */
await formatCases(t, { groups: ['DragonFly'], format: /^DragonFly$/ });
