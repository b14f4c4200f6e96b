import { LIMITS } from '../store/table/schema';

/** Per-image log kept on the record when the batch asked for debug; bounded so the item stays small. */
export class DebugLog {
  private readonly lines: string[] = [];
  private dropped = 0;
  constructor(
    private readonly enabled: boolean,
    private readonly start: number = Date.now(),
  ) {}

  add(message: string): void {
    if (!this.enabled) return;
    if (this.lines.length >= LIMITS.logLines - 1) {
      this.dropped++;
      return;
    }
    this.lines.push(`+${Date.now() - this.start}ms ${message}`.slice(0, LIMITS.logLineChars));
  }

  /** The lines to store, or undefined when debug is off. */
  entries(): string[] | undefined {
    if (!this.enabled) return undefined;
    return this.dropped ? [...this.lines, `(${this.dropped} more lines dropped)`] : [...this.lines];
  }
}
