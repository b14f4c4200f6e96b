// The model answering DetectLabels now, as a re-detection learns it: one probe's LabelModelVersion read as {name,
// version} (lib/model-version.ts parseModelVersion). Which images it classifies again is decided by the one comparison
// of lib/model-version.ts (answeredByCurrentModel), as the reuse and fingerprints:known decide theirs.
import { DetectLabelsCommand, type RekognitionClient } from '@aws-sdk/client-rekognition';
import type { ModelVersion } from '../domain/detection';
import { parseModelVersion, sameModel, UNKNOWN_MODEL } from '../model-version';

/** How long a model learnt from an answer is trusted in a process before it is asked again. */
const MODEL_PROBE_TTL_MS = 5 * 60_000;

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

const learnt = new WeakMap<RekognitionClient, { model: ModelVersion; until: number }>();

/**
 * The model answering DetectLabels now, learnt from one answer (its LabelModelVersion) on a small grey image, kept
 * MODEL_PROBE_TTL_MS per client: one call a while, priced as any other. A model learnt anew (the first, or one that
 * moved) is handed to `record` (lib/store/model/current-write.ts recordCurrentModel), so that the ingest's reuse
 * learns a moved model too.
 */
export async function currentModel(
  rekognition: RekognitionClient,
  record: (model: ModelVersion) => Promise<void>,
  now: number = Date.now(),
): Promise<ModelVersion> {
  const known = learnt.get(rekognition);
  if (known && known.until > now) return known.model;
  const out = await rekognition.send(new DetectLabelsCommand({ Image: { Bytes: PROBE_JPEG }, MaxLabels: 1, MinConfidence: 99 }));
  const model = parseModelVersion(out.LabelModelVersion);
  if (model.name !== UNKNOWN_MODEL.name && !sameModel(model, known?.model)) await record(model);
  learnt.set(rekognition, { model, until: now + MODEL_PROBE_TTL_MS });
  return model;
}
