import { createReadStream, createWriteStream, type ReadStream, type WriteStream } from 'node:fs';
import type { WriteStream as Terminal } from 'node:tty';
import { stat, unlink } from 'node:fs/promises';
import { AppError } from '../domain/errors.js';

/** What a CSV command's work gets: the file to read (from the start, any number of times), where refused rows go, progress hooks. */
export interface CsvRun {
  open(): ReadStream;
  rejects: WriteStream;
  /** Bytes read so far (a bar on a terminal; nothing otherwise). */
  onProgress?: (bytes: number) => void;
  /** The reading is over and the rows merge, which has no measure of its own. */
  onMerge?: (rows: number) => void;
}

/**
 * A CSV command (dataset import, list upload) around its work: the file's size for the progress
 * bar (on `terminal` only, the CLI's stderr when it is one, so stdout stays the one JSON summary), the rejects file
 * (`<file>.rejected.csv` unless given), removed when nothing was refused or the work failed,
 * and `rejects_file` in the summary. The CSV machinery itself is the caller's, loaded on use.
 */
export async function runCsvFile<S extends { rejected: number }>(
  file: string,
  rejectsPath: string | undefined,
  verb: string,
  terminal: Terminal | undefined,
  work: (run: CsvRun) => Promise<S>,
): Promise<S & { rejects_file: string | null }> {
  const size = await stat(file).then(
    (st) => st.size,
    (err: NodeJS.ErrnoException) => {
      throw new AppError('file_unreadable', `--file ${file}: ${err.code ?? err.message}`);
    },
  );
  const rejectsFile = rejectsPath ?? `${file}.rejected.csv`;
  const bar = terminal && (await progressBar(terminal, size, verb));
  try {
    const summary = await work({
      open: () => createReadStream(file, { highWaterMark: 1 << 20 }),
      rejects: createWriteStream(rejectsFile),
      onProgress: bar?.onProgress,
      onMerge: bar?.onMerge,
    });
    if (summary.rejected === 0) await unlink(rejectsFile).catch(() => {});
    return { ...summary, rejects_file: summary.rejected ? rejectsFile : null };
  } catch (err) {
    await unlink(rejectsFile).catch(() => {});
    throw err;
  } finally {
    bar?.stop();
  }
}

async function progressBar(terminal: Terminal, size: number, verb: string) {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { stream: terminal, format: `${verb} [{bar}] {percentage}% | {value}/{total} bytes | {eta_formatted} left`, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(size, 0);
  let stopped = false;
  const stop = () => {
    if (!stopped) bar.stop();
    stopped = true;
  };
  return {
    onProgress: (bytes: number) => bar.update(bytes),
    onMerge: (rows: number) => {
      stop();
      terminal.write(`merging ${rows} rows...\n`);
    },
    stop,
  };
}
