// One image of a re-detection (lib/redetect/plan.ts queues it; the ingest function runs it beside the uploads): its
// resting object (an imported image's source object) read again, DetectLabels on its bytes as the ingest sends them,
// the new answer written with the one it replaces (lib/store/redetect/images.ts). The image is claimed first (a lease on its
// record naming the run): a copy of the message handled meanwhile comes back later, and a message delivered again
// finds the answer written and only settles the run (a counter move a crash lost is recounted there), so an image is
// paid for once however often its message comes.
import type { RekognitionClient } from '@aws-sdk/client-rekognition';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config';
import type { Batch } from '../domain/batch';
import type { Image } from '../domain/image';
import { type DetectLabelsObserver, detectLabels } from '../ingest/detect';
import { RejectedUploadError } from '../ingest/errors';
import { readSource } from '../ingest/source';
import { readUpload, UploadGoneError } from '../ingest/storage';
import type { AnswerOutcome, NewAnswer } from '../store/redetect/answers';
import type { RedetectMessage } from './message';

/**
 * What one image's re-detection asks of the store, and only that (lib/store/redetect/images.ts Redetections implements
 * it; a test may hand a fake): the batch and its run, the image, the claim on it, its new answer, the run's settling.
 */
export interface RedetectImageStore {
  getBatch(clientId: string, batchId: string): Promise<Batch | undefined>;
  getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined>;
  runs: { claim(image: Pick<Image, 'clientId' | 'batchId' | 'fprint'>, run: string, leaseMs: number): Promise<boolean> };
  /** Writes the new answer (none: the image keeps its own) and moves the run's count once. */
  answer(image: Image, run: string, answer: NewAnswer | undefined): Promise<AnswerOutcome>;
  /** Ends the run when no image is owed any more (a count a crash lost is recounted here). */
  settle(clientId: string, batchId: string, run: string): Promise<Batch | undefined>;
}

export interface RedetectJobDeps {
  redetections: RedetectImageStore;
  s3: S3Client;
  rekognition: RekognitionClient;
  config: Pick<
    Config,
    'bucketName' | 'maxUploadBytes' | 'minConfidence' | 'maxLabels' | 'catMinConfidence' | 'maxInputPixels' | 'claimLeaseSeconds'
  > & {
    clientHint?: boolean;
  };
  /** Told of each DetectLabels call (the ingest's metrics). */
  onCall?: () => void;
  onRequest?: DetectLabelsObserver;
}

/**
 * How the message went: its image answered now, before, or not at all because its run is over (or the batch is gone);
 * `in-flight`: another delivery holds the image's claim, and this one comes back once that lease is over.
 */
type RedetectJobOutcome = AnswerOutcome | 'stale' | 'in-flight';

export async function runRedetectJob(deps: RedetectJobDeps, m: RedetectMessage): Promise<RedetectJobOutcome> {
  const { redetections, config } = deps;
  const batch = await redetections.getBatch(m.clientId, m.batchId);
  if (batch?.redetecting?.run !== m.run || batch.deleting === true) return 'stale';
  const image = await redetections.getImage(m.clientId, m.batchId, m.fprint);
  if (image?.redetectRun !== m.run) {
    await redetections.settle(m.clientId, m.batchId, m.run);
    return 'answered-before';
  }
  // Claimed before it is paid for: of copies of the message handled at once (a start asked again, a redelivery), one
  // pays; the others come back after the lease and find the answer written.
  if (!(await redetections.runs.claim(image, m.run, config.claimLeaseSeconds * 1000))) {
    if ((await redetections.getImage(m.clientId, m.batchId, m.fprint))?.redetectRun === m.run) return 'in-flight';
    await redetections.settle(m.clientId, m.batchId, m.run);
    return 'answered-before';
  }
  // An image whose object is gone keeps its answer, as one DetectLabels refuses: the run goes on without it. An
  // imported image is read again where it is, as the ingest read it (one changed or gone since keeps its answer too).
  const object = image.source
    ? await readSource(deps.s3, image.source, config.maxUploadBytes).catch((err: unknown) => {
        if (err instanceof RejectedUploadError) return undefined;
        throw err;
      })
    : image.restingKey
      ? await readUpload(deps.s3, config.bucketName, image.restingKey, config.maxUploadBytes).catch((err: unknown) => {
          if (err instanceof UploadGoneError) return undefined;
          throw err;
        })
      : undefined;
  if (!object) return redetections.answer(image, m.run, undefined);
  deps.onCall?.();
  const answer = await detectLabels(
    deps.rekognition,
    { bytes: object.bytes.length, format: image.format ?? 'unknown', width: image.width ?? 0, height: image.height ?? 0 },
    object.bytes,
    {
      minConfidence: config.minConfidence,
      maxLabels: config.maxLabels,
      catMinConfidence: batch.catMinConfidence ?? config.catMinConfidence,
      maxInputPixels: config.maxInputPixels,
      ...(config.clientHint === true ? { clientHint: m.clientId } : {}),
      ...(deps.onRequest ? { onRequest: deps.onRequest } : {}),
    },
  ).catch((err: unknown) => {
    // Refused outright (its bytes and a converted JPEG both): the image keeps its answer, the run goes on.
    if (err instanceof RejectedUploadError) return undefined;
    throw err;
  });
  return redetections.answer(image, m.run, answer);
}
