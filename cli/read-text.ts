import { readFile } from 'node:fs/promises';
import { AppError } from '../domain/errors.js';

/** A file a flag names, as UTF-8 text; one the command cannot read is refused as file_unreadable with the flag and the OS's code. */
export async function readText(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new AppError('file_unreadable', `${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
