import { simpleParser, type ParsedMail, type SimpleParserOptions } from 'mailparser';

/**
 * Parses an inbound report (DSN or ARF) with mailparser, set so that every part of a
 * multipart/report stays a part: keepDeliveryStatus keeps message/delivery-status an attachment
 * (by default mailparser folds it into the text), and ignoreEmbedded (passed through to its
 * splitter, mailsplit) keeps a returned message/rfc822 original whole even when marked inline,
 * where mailparser would otherwise merge it into the report and drop its Message-ID.
 * readDsn and readArf expect a message parsed by this.
 */
export function parseReportMessage(raw: Buffer | string): Promise<ParsedMail> {
  const options: SimpleParserOptions & { ignoreEmbedded: boolean } = {
    keepDeliveryStatus: true,
    ignoreEmbedded: true,
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  };
  return simpleParser(raw, options);
}
