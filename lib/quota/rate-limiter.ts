// The API's per-client rate limit (docs/design.md §11): a token bucket per client, `ratePerSecond` tokens a second and
// a burst of twice that. The buckets live in the process that serves the API: one for the whole local stack; on AWS
// one per Lambda container, which API Gateway's own stage throttling bounds as a whole (docs/scaling.md).
import { IceCatError, type IceCatErrorOptions } from '../errors';
import { burstOf, type ClientLimits } from './limits';
import { TokenBucket } from './token-bucket';

export class RateLimitedError extends IceCatError {
  override name = 'RateLimitedError';
  readonly code = 'rate_limited';
  readonly clientId: string;
  /** Whole seconds until a request will be taken again (Retry-After). */
  readonly retryAfterSeconds: number;
  readonly ratePerSecond: number;
  constructor(message: string, options: IceCatErrorOptions & { clientId: string; retryAfterSeconds: number; ratePerSecond: number }) {
    super(message, options);
    this.clientId = options.clientId;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.ratePerSecond = options.ratePerSecond;
  }
}

interface RateLimiterOptions {
  /** The client's limits (cached by the caller). */
  limitsOf(clientId: string): Promise<ClientLimits>;
  now?: () => number;
  /** Buckets kept at most; the least recently used go first. */
  maxClients?: number;
}

/** Admits a client's request or throws RateLimitedError. */
export class ClientRateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly now: () => number;

  constructor(private readonly opts: RateLimiterOptions) {
    this.now = opts.now ?? Date.now;
  }

  async admit(clientId: string): Promise<void> {
    const { ratePerSecond } = await this.opts.limitsOf(clientId);
    const now = this.now();
    let bucket = this.buckets.get(clientId);
    if (bucket) {
      this.buckets.delete(clientId);
      bucket.setRate(ratePerSecond, burstOf(ratePerSecond), now);
    } else {
      bucket = new TokenBucket(ratePerSecond, burstOf(ratePerSecond), now);
      if (this.buckets.size >= (this.opts.maxClients ?? 10_000)) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    this.buckets.set(clientId, bucket);
    const wait = bucket.take(now);
    if (wait > 0) {
      const retryAfterSeconds = Math.max(1, Math.ceil(wait));
      throw new RateLimitedError(
        `too many requests: this client may send ${ratePerSecond} requests per second (bursts of ${burstOf(ratePerSecond)}); retry after ${retryAfterSeconds} s`,
        { clientId, retryAfterSeconds, ratePerSecond },
      );
    }
  }

  /**
   * Charges an admitted request's cost beyond its one token (POST /v1/fingerprints:known: by the fingerprints asked),
   * into debt if need be: the client's next request waits until it is paid.
   */
  charge(clientId: string, tokens: number): void {
    this.buckets.get(clientId)?.charge(this.now(), tokens);
  }
}

let containerLimiter: ClientRateLimiter | undefined;

/**
 * The container's one limiter: the API functions running in one process (both, in the local stack) share the clients'
 * buckets, so a client's rate is one rate whichever function serves its requests.
 */
export function containerRateLimiter(limitsOf: RateLimiterOptions['limitsOf']): ClientRateLimiter {
  return (containerLimiter ??= new ClientRateLimiter({ limitsOf }));
}
