// A token bucket: `rate` tokens a second flow in, up to `capacity`; each request takes one, and a costlier one is
// charged the rest once admitted. Pure, with the clock passed in, so that its arithmetic is tested without waiting.

export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private rate: number,
    private capacity: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.at = now;
  }

  /** Takes a token: 0 when one was there, else the seconds until one will be (nothing is taken then). */
  take(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return (1 - this.tokens) / this.rate;
  }

  /**
   * Takes `tokens` more for a request already admitted (one that costs more than one token), down into debt if need be:
   * the bucket refills from below zero at its rate, so the next request waits until the cost is paid.
   */
  charge(now: number, tokens: number): void {
    this.refill(now);
    this.tokens -= tokens;
  }

  /** A changed rate applies from now on; tokens already in the bucket stay (up to the new capacity). */
  setRate(rate: number, capacity: number, now: number): void {
    if (rate === this.rate && capacity === this.capacity) return;
    this.refill(now);
    this.rate = rate;
    this.capacity = capacity;
    this.tokens = Math.min(this.tokens, capacity);
  }

  private refill(now: number): void {
    if (now > this.at) this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = Math.max(this.at, now);
  }
}
