import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A part of a document generated from code (the configuration table, the error tables), kept
 * between two marker lines so the prose around it stays hand-written. One reader and one writer
 * for every such part, so each generator states only its markers and its text.
 */
export interface GeneratedSection {
  file: string;
  begin: string;
  end: string;
}

/** The generated part of a document's text (between the markers), or undefined without them. */
export function generatedPart(section: GeneratedSection, doc: string): string | undefined {
  const start = doc.indexOf(section.begin);
  const end = doc.indexOf(section.end);
  if (start === -1 || end === -1 || end < start) return undefined;
  return doc.slice(start + section.begin.length, end).trim();
}

/** Rewrites the part between the markers with `text`; a document without them is an error. */
export function writeGeneratedPart(section: GeneratedSection, text: string): void {
  const doc = readFileSync(section.file, 'utf8');
  const start = doc.indexOf(section.begin);
  const end = doc.indexOf(section.end);
  if (start === -1 || end === -1 || end < start) throw new Error(`${section.file} lacks the markers of its generated part`);
  writeFileSync(section.file, `${doc.slice(0, start + section.begin.length)}\n${text}\n${doc.slice(end)}`);
}

/** The script's way: `--write` rewrites the document, else the text is printed. */
export function writeOrPrint(section: GeneratedSection, text: string): void {
  if (process.argv.includes('--write')) writeGeneratedPart(section, text);
  else process.stdout.write(text + '\n');
}
