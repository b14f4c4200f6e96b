// The erase and callbacks queues of the local stack: in-process LocalJobQueues consumed by the erase and callbacks
// functions' own handlers (lib/jobs/queue.ts). The functions that send to them (batches, ingest, the sweeps) are
// given these queues through their deps, as on AWS they are given the SQS queues' URLs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import type { CallbacksHandler } from '../../functions/callbacks/app';
import { type JobQueue, type LocalConsumer, type LocalConsumerLimits, LocalJobQueue, NoLocalConsumerError } from '../../lib/jobs/queue';
import { redetectMessageIn } from '../../lib/redetect/message';
import { loadHttpApiTemplate } from '../gateway/routes';
import type { LocalIam } from '../iam/iam';
import { buildAs } from '../iam/signing';
import { checkConsumer, senderAs } from '../queue/iam';

export interface LocalJobQueues {
  erasures: LocalJobQueue;
  callbacks: LocalJobQueue;
  /** The uploads queue as POST …:redetect sends to it: the stack's bridge (uploadsJobQueue), else none. */
  redetects: JobQueue;
  /** Imports' listings (local/stack/import-lister.ts consumes them). */
  listings: LocalJobQueue;
  /** Stops consuming: a send after it fails. */
  close(): void;
}

/** What each consumer runs with on AWS: its function's timeout, its queue's visibility timeout and receives. */
export interface JobConsumerLimits {
  erase?: LocalConsumerLimits;
  callbacks?: LocalConsumerLimits;
}

/** The erase and callbacks functions' timeouts (serverless.yml) and their queues' redelivery (resources/jobs.yml). */
export async function loadJobConsumerLimits(root: string): Promise<Required<JobConsumerLimits>> {
  const [template, jobsYaml] = await Promise.all([loadHttpApiTemplate(root), readFile(path.join(root, 'resources', 'jobs.yml'), 'utf8')]);
  const jobs = parse(jobsYaml, { logLevel: 'silent' }) as {
    Resources: Record<string, { Properties: { VisibilityTimeout: number; RedrivePolicy: { maxReceiveCount: number } } }>;
  };
  const limitsOf = (fn: string, queue: string): LocalConsumerLimits => {
    const timeout = template.functions.find((f) => f.name === fn)?.timeoutSeconds;
    const props = jobs.Resources[queue]?.Properties;
    if (timeout === undefined || !props) throw new TypeError(`no function ${fn} or queue ${queue} in the template`);
    return {
      timeoutMs: timeout * 1000,
      visibilityTimeoutMs: Number(props.VisibilityTimeout) * 1000,
      maxReceiveCount: Number(props.RedrivePolicy.maxReceiveCount),
    };
  };
  return { erase: limitsOf('erase', 'EraseQueue'), callbacks: limitsOf('callbacks', 'CallbackQueue') };
}

/** Both queues without consumers (a stack that runs no functions of its own): a send to either fails. */
export function unconsumedJobQueues(limits: JobConsumerLimits = {}): LocalJobQueues {
  return {
    // A DELETE answers once its erasure is done, so the local stack is deterministic; callbacks never hold up the sender.
    erasures: new LocalJobQueue('erase', { awaitImmediate: true, ...(limits.erase ? { limits: limits.erase } : {}) }),
    callbacks: new LocalJobQueue('callbacks', { awaitImmediate: false, ...(limits.callbacks ? { limits: limits.callbacks } : {}) }),
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
 * Builds both queues and their consumers, each held to its function's timeout and its queue's redelivery as the
 * template deploys them. The consumers read their configuration (TABLE_NAME, CALLBACK_SIGNING_KEY...) from the
 * environment when built, so call this once the stack's environment is applied.
 */
export async function startLocalJobQueues(root: string, iam: LocalIam): Promise<LocalJobQueues> {
  const { erasures, callbacks, redetects, listings } = unconsumedJobQueues(await loadJobConsumerLimits(root));
  // Each consumer is built as its function (it signs as itself), and polls with its role (local/queue/iam.ts).
  await checkConsumer(iam, 'erase', 'erase');
  await checkConsumer(iam, 'callbacks', 'callbacks');
  const erase = await buildAs(
    'erase',
    async () => (await import(path.join(root, 'functions', 'erase', 'handler'))) as { handler: LocalConsumer },
  );
  const { createCallbacksHandler } = (await import(path.join(root, 'functions', 'callbacks', 'app'))) as {
    createCallbacksHandler(wiring: { callbacks: JobQueue }): CallbacksHandler;
  };
  erasures.consumeWith(erase.handler);
  const consumer = await buildAs('callbacks', () =>
    createCallbacksHandler({ callbacks: senderAs(iam, 'callbacks', 'callbacks', callbacks) }),
  );
  callbacks.consumeWith(consumer);
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
