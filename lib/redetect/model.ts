// Which images a re-detection classifies again: those answered by another model than the one answering now. The one
// decision is answeredByCurrentModel, in this one place, so that a richer record of the model (name and version) can
// replace it without touching its callers.
import type { RekognitionClient } from '@aws-sdk/client-rekognition';
import sharp from 'sharp';
import { buildDetectRequest, detectCommand } from '../ingest/detect';

/** Whether a record's answer came from the model answering now: its stored model string (DetectLabels' LabelModelVersion) is that model's. */
export const answeredByCurrentModel = (record: { model: string }, current: string): boolean => record.model === current;

/** How long a model learnt from an answer is trusted in a process before it is asked again. */
export const MODEL_PROBE_TTL_MS = 5 * 60_000;

/** A plain grey 80×80 JPEG (Rekognition's smallest side): what the probe shows the detector. */
let probeImage: Promise<Buffer> | undefined;
const probe = (): Promise<Buffer> =>
  (probeImage ??= sharp({ create: { width: 80, height: 80, channels: 3, background: { r: 128, g: 128, b: 128 } } })
    .jpeg()
    .toBuffer());

const learnt = new WeakMap<RekognitionClient, { model: string; until: number }>();

/**
 * The model answering DetectLabels now, learnt from one answer (its LabelModelVersion) on a small grey image, kept
 * MODEL_PROBE_TTL_MS per client: one call a while, priced as any other.
 */
export async function currentModel(rekognition: RekognitionClient, now: number = Date.now()): Promise<string> {
  const known = learnt.get(rekognition);
  if (known && known.until > now) return known.model;
  const out = await rekognition.send(detectCommand(buildDetectRequest(await probe(), { minConfidence: 99, maxLabels: 1 })));
  const model = out.LabelModelVersion ?? 'unknown';
  learnt.set(rekognition, { model, until: now + MODEL_PROBE_TTL_MS });
  return model;
}
