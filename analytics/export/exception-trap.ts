import { Transform, type TransformCallback } from 'node:stream';

/**
 * ClickHouse answers 200 and starts streaming before a query has finished; a failure after that
 * cannot change the status, so the server (25.11 and later) appends an exception block to the
 * body instead: `\r\n__exception__\r\n<tag>\r\n<message>\n<length> <tag>\r\n__exception__\r\n`,
 * where <tag> is a random value sent in the X-ClickHouse-Exception-Tag response header.
 *
 * This transform passes the bytes through unchanged until that block starts, and then fails the
 * stream with the message instead of passing on any byte of the block, so the export's client
 * sees a broken download, never an error text inside its CSV or JSON. It holds back at most the
 * marker's length minus one bytes at each chunk's end (only from a `\r` on, the marker's first
 * byte), to see a marker split between two chunks. Older servers send no tag: there is nothing
 * to detect and this is not used (see docs/analytics.md, Exports).
 */
export class ClickHouseExceptionTrap extends Transform {
  private readonly marker: Buffer;
  private tail: Buffer = Buffer.alloc(0);
  private exception: Buffer[] | undefined;
  private exceptionBytes = 0;

  constructor(tag: string) {
    super();
    this.marker = Buffer.from(`\r\n__exception__\r\n${tag}`);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.exception) return this.collect(chunk, callback);
    if (this.tail.length) {
      // A marker across the seam starts in the tail and ends in the first bytes of this chunk.
      const seam = Buffer.concat([this.tail, chunk.subarray(0, this.marker.length - 1)]);
      const at = seam.indexOf(this.marker);
      if (at !== -1) {
        const whole = Buffer.concat([this.tail, chunk]);
        this.exception = [];
        if (at > 0) this.push(whole.subarray(0, at));
        return this.collect(whole.subarray(at), callback);
      }
      this.push(this.tail);
      this.tail = Buffer.alloc(0);
    }
    const at = chunk.indexOf(this.marker);
    if (at !== -1) {
      this.exception = [];
      if (at > 0) this.push(chunk.subarray(0, at));
      return this.collect(chunk.subarray(at), callback);
    }
    const from = Math.max(0, chunk.length - (this.marker.length - 1));
    const cr = chunk.indexOf(0x0d, from);
    if (cr === -1) return callback(null, chunk);
    this.tail = Buffer.from(chunk.subarray(cr));
    callback(null, chunk.subarray(0, cr));
  }

  /**
   * ClickHouse's error message once the block has started, else undefined. The server may close
   * the connection right after the block (the source then fails rather than ends), so callers
   * read it here whatever error the pipeline reports.
   */
  get failure(): string | undefined {
    if (!this.exception) return undefined;
    const block = Buffer.concat(this.exception).toString('utf8');
    return block.slice(this.marker.length).replace(/^\r\n/, '').split('\n')[0]?.trim() || 'unknown error';
  }

  override _flush(callback: TransformCallback): void {
    if (!this.exception) return callback(null, this.tail.length ? this.tail : undefined);
    callback(new Error(`ClickHouse failed mid-stream: ${this.failure}`));
  }

  private collect(chunk: Buffer, callback: TransformCallback): void {
    // The block is a few hundred bytes; keep at most 64 KB of it whatever follows.
    if (this.exceptionBytes < 65_536) {
      this.exception!.push(chunk);
      this.exceptionBytes += chunk.length;
    }
    callback();
  }
}
