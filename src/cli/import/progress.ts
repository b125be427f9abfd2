import { SingleBar } from 'cli-progress';

export interface ProgressCounts {
  /** Lines read from the input so far. */
  read: number;
  /** Lines whose outcome is known (validated and rejected, or their batch finished). */
  done: number;
  rejected: number;
  bytes: number;
}

/**
 * Progress on stderr: a bar with lines per second on a terminal (bytes of the file for the bar, since
 * the line count is not known in advance), otherwise one plain line every `intervalMs`.
 */
export class Progress {
  private readonly started = Date.now();
  private bar: SingleBar | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly counts: () => ProgressCounts,
    totalBytes: number | null,
    options: { tty: boolean; intervalMs: number; enabled: boolean },
  ) {
    if (!options.enabled) return;
    if (options.tty) {
      this.bar = new SingleBar({
        format: totalBytes
          ? ' {bar} {percentage}% | {read} lines read | {done} done | {rate} lines/s | {rejected} rejected'
          : ' {read} lines read | {done} done | {rate} lines/s | {rejected} rejected',
        stream: process.stderr,
        hideCursor: true,
        fps: 5,
      });
      this.bar.start(totalBytes ?? 1, 0, this.payload());
      this.timer = setInterval(() => this.bar!.update(this.counts().bytes, this.payload()), 200);
    } else {
      this.timer = setInterval(() => {
        const c = this.counts();
        process.stderr.write(`progress: ${c.read} lines read, ${c.done} done, ${this.rate()} lines/s, ${c.rejected} rejected\n`);
      }, options.intervalMs);
    }
    this.timer.unref();
  }

  private rate(): number {
    const seconds = (Date.now() - this.started) / 1000;
    return seconds > 0 ? Math.round(this.counts().done / seconds) : 0;
  }

  private payload() {
    const c = this.counts();
    return { read: c.read, done: c.done, rejected: c.rejected, rate: this.rate() };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.bar) {
      this.bar.update(this.counts().bytes, this.payload());
      this.bar.stop();
    }
  }
}
