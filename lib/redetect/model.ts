// Which images a re-detection classifies again: those answered by another model than the one answering now. The one
// decision is answeredByCurrentModel, in this one place, so that a richer record of the model (name and version) can
// replace it without touching its callers.
import { DetectLabelsCommand, type RekognitionClient } from '@aws-sdk/client-rekognition';

/** Whether a record's answer came from the model answering now: its stored model string (DetectLabels' LabelModelVersion) is that model's. */
export const answeredByCurrentModel = (record: { model: string }, current: string): boolean => record.model === current;

/** How long a model learnt from an answer is trusted in a process before it is asked again. */
export const MODEL_PROBE_TTL_MS = 5 * 60_000;

/**
 * A plain grey 80×80 JPEG (Rekognition's smallest side; 301 bytes, made by sharp once and kept here so that the
 * batches function bundles no image library): what the probe shows the detector.
 */
const PROBE_JPEG = Buffer.from(
  '/9j/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2' +
    'NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCABQAFADASIAAhEBAxEB/8QAFAABAAAAAAAAAAAAAAAAAAAAAP/EABQQAQAAAAAAAAAA' +
    'AAAAAAAAAAD/xAAUAQEAAAAAAAAAAAAAAAAAAAAA/8QAFBEBAAAAAAAAAAAAAAAAAAAAAP/aAAwDAQACEQMRAD8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' +
    'AAAAAAAA//2Q==',
  'base64',
);

const learnt = new WeakMap<RekognitionClient, { model: string; until: number }>();

/**
 * The model answering DetectLabels now, learnt from one answer (its LabelModelVersion) on a small grey image, kept
 * MODEL_PROBE_TTL_MS per client: one call a while, priced as any other.
 */
export async function currentModel(rekognition: RekognitionClient, now: number = Date.now()): Promise<string> {
  const known = learnt.get(rekognition);
  if (known && known.until > now) return known.model;
  const out = await rekognition.send(new DetectLabelsCommand({ Image: { Bytes: PROBE_JPEG }, MaxLabels: 1, MinConfidence: 99 }));
  const model = out.LabelModelVersion ?? 'unknown';
  learnt.set(rekognition, { model, until: now + MODEL_PROBE_TTL_MS });
  return model;
}
