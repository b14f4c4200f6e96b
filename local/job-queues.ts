// The erase and callbacks queues of the local stack: in-process LocalJobQueues consumed by the erase and callbacks
// functions' own handlers (lib/jobs/queue.ts). The functions that send to them (batches, ingest, the sweeps) are
// given these queues through their deps, as on AWS they are given the SQS queues' URLs.
import path from 'node:path';
import { LocalJobQueue, NoLocalConsumerError, type JobQueue, type LocalConsumer } from '../lib/jobs/queue';
import { redetectMessageIn } from '../lib/redetect/message';
import type { CallbacksHandler } from '../functions/callbacks/app';

export interface LocalJobQueues {
  erasures: LocalJobQueue;
  callbacks: LocalJobQueue;
  /** The uploads queue as POST …:redetect sends to it: the stack's bridge (uploadsJobQueue), else none. */
  redetects: JobQueue;
  /** Imports' listings (local/import-lister.ts consumes them). */
  listings: LocalJobQueue;
  /** Stops consuming: a send after it fails. */
  close(): void;
}

/** Both queues without consumers (a stack that runs no functions of its own): a send to either fails. */
export function unconsumedJobQueues(): LocalJobQueues {
  return {
    // A DELETE answers once its erasure is done, so the local stack is deterministic; callbacks never hold up the sender.
    erasures: new LocalJobQueue('erase', { awaitImmediate: true }),
    callbacks: new LocalJobQueue('callbacks', { awaitImmediate: false }),
    redetects: noUploadsQueue,
    listings: new LocalJobQueue('imports', { awaitImmediate: false }),
    close: () => undefined,
  };
}

const noUploadsQueue: JobQueue = {
  send: () => Promise.reject(new NoLocalConsumerError('no uploads queue here (is the local stack running?)', { queue: 'uploads' })),
};

/**
 * The bridge's durable queue as the uploads queue POST …:redetect sends to: journaled before the send returns, so a
 * crash loses no image of a re-detection, each message in its client's group (fair share, docs/design.md §11).
 */
export const uploadsJobQueue = (bridge: { send(body: string, options?: { groupId?: string }): string }): JobQueue => ({
  send: async (body) => {
    const clientId = redetectMessageIn(body)?.clientId;
    bridge.send(body, clientId !== undefined ? { groupId: clientId } : {});
  },
});

/**
 * Builds both queues and their consumers. The consumers read their configuration (TABLE_NAME, CALLBACK_SIGNING_KEY...)
 * from the environment when built, so call this once the stack's environment is applied.
 */
export async function startLocalJobQueues(root: string): Promise<LocalJobQueues> {
  const { erasures, callbacks, redetects, listings } = unconsumedJobQueues();
  const erase = (await import(path.join(root, 'functions', 'erase', 'handler'))) as { handler: LocalConsumer };
  const { createCallbacksHandler } = (await import(path.join(root, 'functions', 'callbacks', 'app'))) as {
    createCallbacksHandler(wiring: { callbacks: LocalJobQueue }): CallbacksHandler;
  };
  erasures.consumeWith(erase.handler);
  callbacks.consumeWith(createCallbacksHandler({ callbacks }));
  return {
    erasures,
    callbacks,
    redetects,
    listings,
    close: () => {
      erasures.consumeWith(undefined);
      callbacks.consumeWith(undefined);
      listings.consumeWith(undefined);
    },
  };
}
