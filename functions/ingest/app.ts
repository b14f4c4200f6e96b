// The `ingest` function built from what it is given: the callbacks queue and event bus its completions go to, how a
// deferred message goes back to its queue, and its metrics. On AWS handler.ts gives SQS, EventBridge and Powertools'
// EMF; the local stack gives its in-process queues and a listener of the EMF documents. The rest it reads from its
// environment once, when built: a bad number stops it there, naming the variable, before any message is taken.
// The partial batch answer is Powertools' BatchProcessor's. Two things it does not do are added here (docs/design.md
// §1): at most INGEST_PARALLELISM records in flight (it starts every record at once), and a message whose image
// another run's claim still leases is failed and made visible again only once that lease is over
// (lib/aws/message-visibility.ts).
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { clients } from '../../lib/aws/clients';
import type { MessageVisibility, RetryLater } from '../../lib/aws/message-visibility';
import { type TraceKeys, traceWork } from '../../lib/aws/tracing';
import { loadAwsClientSettings, loadIngestConfig } from '../../lib/config';
import { IceCatError, type IceCatErrorOptions } from '../../lib/errors';
import { importMessageIn } from '../../lib/import/message';
import { boundedBy } from '../../lib/ingest/bounded';
import type { IngestDeps } from '../../lib/ingest/deps';
import type { IngestMetrics } from '../../lib/ingest/metrics';
import { processImport, processUpload } from '../../lib/ingest/pipeline';
import { decodeS3Key, tryParseUploadKey } from '../../lib/ingest/s3-key';
import { completionHook, type NotifyWiring } from '../../lib/notify/wiring';
import { type RedetectJobDeps, runRedetectJob } from '../../lib/redetect/job';
import { redetectMessageIn } from '../../lib/redetect/message';
import { takeBack } from '../../lib/store/batch/take-back';
import { BatchStore } from '../../lib/store/batch-store';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { Redetections } from '../../lib/store/redetect/images';
import { clientLimitsCacheMs, defaultClientLimits } from '../config';
import { uploadsIn } from './events';

export interface IngestWiring extends NotifyWiring {
  /** How a deferred message is handed back to its queue for a set time. */
  visibility: MessageVisibility;
  metrics: IngestMetrics;
}

export type IngestHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/** The message's uploads are deferred: it fails, and comes back once `delaySeconds` have passed. */
class RetryLaterError extends IceCatError {
  override name = 'RetryLaterError';
  readonly code = 'retry_later';
  readonly delaySeconds: number;
  constructor(message: string, options: IceCatErrorOptions & { delaySeconds: number }) {
    super(message, options);
    this.delaySeconds = options.delaySeconds;
  }
}

/** The client and batch an upload key names; none for a key of another shape (the pipeline says why it is refused). */
function traceKeysOf(encodedKey: string): TraceKeys {
  try {
    const key = tryParseUploadKey(decodeS3Key(encodedKey));
    return { clientId: key?.clientId, batchId: key?.batchId };
  } catch {
    return {};
  }
}

/**
 * A re-detection's images come on the same queue as the uploads (lib/redetect/plan.ts): DetectLabels' concurrency and
 * the clients' fair share hold for them as for uploads, and the queue keeps them through a crash. The handler answers
 * false for a message that is not one, else the seconds after which it is to come back (0: done with it).
 */
function redetectHandler(deps: IngestDeps, redetections: Redetections, logger: Logger): (record: SQSRecord) => Promise<false | number> {
  const job: RedetectJobDeps = {
    redetections,
    s3: deps.s3,
    rekognition: deps.rekognition,
    config: deps.config,
    onCall: () => deps.metrics.detectLabelsCall(),
    onRequest: (outcome, ms) => deps.metrics.detectLabelsRequest(outcome, ms),
  };
  return async (record) => {
    const message = redetectMessageIn(record.body);
    if (!message) return false;
    const outcome = await traceWork('redetect', message, () => runRedetectJob(job, message));
    logger.info('re-detection handled', { messageId: record.messageId, fprint: message.fprint, outcome });
    // Another delivery holds the image's claim: this one comes back once that lease is over.
    return outcome === 'in-flight' ? deps.config.claimLeaseSeconds : 0;
  };
}

/**
 * The uploads one message announces, each handled in order: an S3 notification's, or one imported image (docs/design.md
 * §16: read where it is, recorded in the batch its import opened). Answers the longest wait a deferred one asks for.
 */
async function uploadsOf(deps: IngestDeps, record: SQSRecord): Promise<number> {
  let delaySeconds = 0;
  const imported = importMessageIn(record.body);
  const uploads = imported ? [imported] : uploadsIn(record);
  for (const upload of uploads) {
    // Each upload its own subsegment, annotated with its client and batch.
    const result =
      'type' in upload
        ? await traceWork('import', upload, () => processImport(deps, upload))
        : await traceWork('upload', traceKeysOf(upload.encodedKey), () => processUpload(deps, upload));
    deps.logger.info('upload handled', { messageId: record.messageId, ...result });
    if (result.outcome === 'deferred') delaySeconds = Math.max(delaySeconds, result.retryAfterSeconds);
  }
  return delaySeconds;
}

export function createIngestHandler(wiring: IngestWiring): IngestHandler {
  const config = loadIngestConfig();
  const logger = new Logger({ serviceName: 'icecat-ingest' });
  const { s3, ddb, rekognition } = clients(loadAwsClientSettings());
  const onDone = completionHook(wiring, config.pricePerImageUsd, (message, details) => logger.error(message, details));
  const store = new BatchStore({
    ddb,
    tableName: config.tableName,
    transactions: config.transactions,
    onDone,
    takeBack: takeBack(ddb, config.tableName),
  });
  const deps: IngestDeps = {
    s3,
    rekognition,
    store,
    config,
    logger,
    metrics: wiring.metrics,
    // Each upload counts against its client's daily images quota (docs/design.md §11).
    quota: new ClientQuotaStore({
      ddb,
      tableName: config.tableName,
      defaults: defaultClientLimits(),
      cacheMs: clientLimitsCacheMs(),
      transactions: config.transactions,
    }),
  };
  const visibility = wiring.visibility;
  const redetect = redetectHandler(deps, new Redetections(store.counters, onDone), logger);

  /** One message: each upload it announces, in order. Deferred uploads fail it with the longest wait among them. */
  const handleRecord = async (record: SQSRecord): Promise<void> => {
    let delaySeconds: number;
    try {
      const redetected = await redetect(record);
      delaySeconds = redetected !== false ? redetected : await uploadsOf(deps, record);
    } catch (err) {
      logger.error('upload failed; SQS will redeliver it', { messageId: record.messageId, error: err as Error });
      throw err;
    }
    if (delaySeconds > 0)
      throw new RetryLaterError(`an image of the message is claimed by another run: back in ${delaySeconds} s`, { delaySeconds });
  };

  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const later: RetryLater[] = [];
    const slot = boundedBy(config.parallelism);
    // A processor per invocation: the local stack runs several invocations of this function at once, and a processor
    // keeps the records of the batch it is working on.
    const processor = new BatchProcessor(EventType.SQS);
    try {
      const response = await processPartialResponse(
        event,
        (record: SQSRecord) =>
          slot(async () => {
            try {
              await handleRecord(record);
            } catch (err) {
              if (err instanceof RetryLaterError) {
                later.push({ messageId: record.messageId, receiptHandle: record.receiptHandle, delaySeconds: err.delaySeconds });
              }
              throw err;
            }
          }),
        processor,
        // Every message failed is still a partial answer: SQS delivers each again, as it would the whole batch.
        { ...(context ? { context } : {}), throwOnFullBatchFailure: false },
      );
      if (later.length > 0) await visibility.retryLater(later, (message, details) => logger.warn(message, details));
      return response;
    } finally {
      deps.metrics.publish();
    }
  };
}
