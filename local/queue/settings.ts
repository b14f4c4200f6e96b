// The local queue's options with their defaults filled in (queue.ts).
import { LOCAL_ACCOUNT_ID, LOCAL_NAMES } from '../contract';
import { LOCAL_FAIR_SHARE } from './fair-share';
import type { LocalQueueOptions, Settings } from './options';

/** The options with their defaults: those of the Lambda event source mapping and the queue of the deployed stack. */
export function queueSettings(options: LocalQueueOptions): Settings {
  return {
    batchSize: 10,
    batchWindowMs: 100,
    maxConcurrency: 2,
    maxReceiveCount: 3,
    retryBaseMs: 1000,
    retryMaxMs: 30_000,
    invocationTimeoutMs: 120_000,
    queueArn: `arn:aws:sqs:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:icecat-ingest`,
    region: LOCAL_NAMES.region,
    functionName: 'icecat-ingest',
    describe: (body) => body.slice(0, 200),
    log: (line) => console.log(line),
    random: Math.random,
    fairShare: LOCAL_FAIR_SHARE,
    ...options,
  };
}

/** The delay before a failed message is delivered again: doubling per receive up to retryMaxMs, with jitter. */
export function retryBackoffMs(settings: Settings, receiveCount: number): number {
  const ceiling = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** (receiveCount - 1));
  return Math.round(ceiling / 2 + (settings.random() * ceiling) / 2);
}
