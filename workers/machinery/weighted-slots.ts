/**
 * A bound on weighted work in progress (the send worker: mails between claim and recorded reply,
 * SEND_BATCH_SIZE x SEND_CONCURRENCY). The send consumer sizes its fetches by the jobs' mean
 * weight so far, which cannot know a fetched job's weight beforehand: fetched work past the bound
 * waits here, in order, instead of going to SMTP. A piece larger than the whole bound runs alone.
 */
export class WeightedSlots {
  private used = 0;
  private readonly waiting: Array<{ weight: number; go: () => void }> = [];

  constructor(private readonly capacity: number) {}

  /** Resolves when `weight` fits (or nothing else runs); call the answer once the work is done. */
  async take(weight: number): Promise<() => void> {
    if (!this.waiting.length && this.fits(weight)) this.used += weight;
    else await new Promise<void>((go) => this.waiting.push({ weight, go }));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= weight;
      this.admit();
    };
  }

  private fits(weight: number): boolean {
    return this.used === 0 || this.used + weight <= this.capacity;
  }

  private admit(): void {
    while (this.waiting.length && this.fits(this.waiting[0]!.weight)) {
      const next = this.waiting.shift()!;
      this.used += next.weight;
      next.go();
    }
  }
}
