// Step 5 (docs/design.md §1): the answer an earlier run paid for, else the client's earlier classification of the
// same pixels in another batch, else DetectLabels on the bytes read.

import { type Batch } from '../../domain/batch';
import { type Image, isCatAt } from '../../domain/image';
import { modelOfRecord } from '../../model-version';
import type { IngestDeps, SuccessResult } from '../deps';
import { detectLabels } from '../detect';
import { RejectedUploadError } from '../errors';
import type { Claimed } from './claim';

/** The claimed image with its answer. */
export interface Classified extends Claimed {
  readonly result: SuccessResult;
}

export async function classifyImage(deps: IngestDeps, claimed: Claimed): Promise<Classified> {
  const result = (await paidBefore(deps, claimed)) ?? (await reuseEarlierResult(deps, claimed)) ?? (await detectInClaim(deps, claimed));
  return { ...claimed, result };
}

/** The batch's cat threshold: the one it was re-thresholded to, else the configured one. */
const catThreshold = (deps: IngestDeps, batch: Batch): number => batch.catMinConfidence ?? deps.config.catMinConfidence;

/** The answer a run before this one paid for and kept on the claim this run took over (no second DetectLabels). */
async function paidBefore(deps: IngestDeps, { upload, held }: Claimed): Promise<SuccessResult | undefined> {
  if (!held.takeover) return undefined;
  const paid = await deps.store.paidResult(held.claim);
  if (!paid) return undefined;
  upload.log.add('recorded the answer an earlier attempt paid for');
  // An answer kept before answers named their model reads as the model its boxes name, as of now.
  return paid.model ? paid : { ...paid, model: modelOfRecord({ detections: paid.detections, classifiedAt: upload.receivedAt }) };
}

/**
 * A copy of the client's earliest classification of the same pixels in another batch (labels, cat instances, the
 * other labels' boxes, its classification time), judged by this batch's threshold. Always the earliest, so every copy agrees with it.
 */
async function reuseEarlierResult(deps: IngestDeps, { upload, image, held }: Claimed): Promise<SuccessResult | undefined> {
  let earlier: Image | undefined;
  try {
    earlier = await deps.store.findReusable(upload.clientId, upload.batchId, image.fprint);
  } catch (err) {
    await deps.store.release(held.claim);
    throw err;
  }
  if (!earlier) return undefined;
  deps.metrics.callSaved('reuse');
  upload.log.add(`reused the classification of batch ${earlier.batchId} (${new Date(earlier.classifiedAt ?? 0).toISOString()})`);
  const catConfidence = earlier.catConfidence ?? 0;
  return {
    status: 'success',
    isCat: isCatAt(catConfidence, catThreshold(deps, upload.batch)),
    catConfidence,
    cats: earlier.cats ?? [],
    labels: earlier.labels ?? [],
    // The other labels' boxes too: the MegaDetector file gives a reused image the original's detections.
    ...(earlier.detections ? { detections: earlier.detections } : {}),
    // The original's model (findReusable reuses only the model that would answer now).
    ...(earlier.model ? { model: earlier.model } : {}),
    reusedFrom: earlier.classifiedAt ?? upload.receivedAt,
    // The client's own verdict on these pixels comes with them (docs/design.md §10).
    ...(earlier.review
      ? {
          review: {
            isCat: earlier.review.isCat,
            ...(earlier.review.note ? { note: earlier.review.note } : {}),
            reviewedAt: earlier.review.reviewedAt,
          },
        }
      : {}),
  };
}

/** Classifies the claimed image; a transient failure gives the claim back so the retry can take it at once. */
async function detectInClaim(deps: IngestDeps, { upload, object, image, held }: Claimed): Promise<SuccessResult> {
  const { config } = deps;
  try {
    deps.metrics.detectLabelsCall();
    const answer = await detectLabels(
      deps.rekognition,
      { bytes: object.bytes.length, format: image.format, width: image.width, height: image.height },
      object.bytes,
      {
        minConfidence: config.minConfidence,
        maxLabels: config.maxLabels,
        catMinConfidence: catThreshold(deps, upload.batch),
        maxInputPixels: config.maxInputPixels,
        ...(config.clientHint ? { clientHint: upload.clientId } : {}),
        onRequest: (outcome, ms) => deps.metrics.detectLabelsRequest(outcome, ms),
        ...(image.rekognitionJpeg ? { convert: image.rekognitionJpeg } : {}),
      },
    );
    upload.log.add(
      `DetectLabels by ${answer.sentAs}: ${answer.labels
        .slice(0, 5)
        .map((l) => `${l.name} ${l.confidence}`)
        .join(', ')}`,
    );
    upload.log.add(answer.isCat ? 'a cat' : 'not a cat');
    const { isCat, catConfidence, cats, labels, trimmed, detections, model } = answer;
    // The model answering now, for every process's next reuse; a failure to note it costs a reuse, never the answer.
    await deps.store.noteAnswerModel(model).catch((err: unknown) => upload.log.add(`the answer's model was not noted: ${String(err)}`));
    return { status: 'success', isCat, catConfidence, cats, labels, detection: trimmed, detections, model };
  } catch (err) {
    if (err instanceof RejectedUploadError) throw new RejectedUploadError(err.message, { code: err.code, cause: err, claim: held });
    await deps.store.release(held.claim);
    throw err;
  }
}
