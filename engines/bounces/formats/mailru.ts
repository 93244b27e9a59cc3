import { exim } from './exim.js';
import type { TextFormat } from './text.js';

/** Mail.Ru: a Russian notice ("Это письмо создано автоматически сервером Mail.Ru"), then Exim's text. */
export const mailru: TextFormat = {
  ...exim,
  name: 'MailRu',
  detect: (m) => /@(?:[a-z0-9.-]+\.)?mail\.ru$/i.test(m.from) || /сервером Mail\.Ru/i.test(m.text),
};
