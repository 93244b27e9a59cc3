import { migration as init } from './001_init.js';
import { migration as mailEvents } from './002_mail_events.js';
import { migration as mailsMirror } from './003_mails_mirror.js';
import { migration as eventsByMessage } from './004_events_by_message.js';
import { migration as eventsByGroup } from './005_events_by_group.js';
import { migration as bounceReason } from './006_bounce_reason.js';
import { migration as humanCounts } from './007_human_counts.js';
import { migration as dmarcReports } from './008_dmarc_reports.js';
import { migration as providers } from './009_providers.js';
import { migration as providerCounts } from './010_provider_counts.js';
import type { Migration } from './migration.js';

export type { Migration };

/** Applied in this order; append only. A released migration is never edited, only followed. */
export const migrations: readonly Migration[] = [init, mailEvents, mailsMirror, eventsByMessage, eventsByGroup, bounceReason, humanCounts, dmarcReports, providers, providerCounts];
