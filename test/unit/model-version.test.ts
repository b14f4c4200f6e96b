import {
  answeredByCurrentModel,
  legacyMappingAt,
  modelOfRecord,
  modelText,
  parseModelVersion,
  REKOGNITION_MODEL_NAME,
  UNKNOWN_MODEL,
} from '../../lib/model-version';
import { localModelVersion, MODEL_LABEL } from '../../local/detector/model-catalog';
import { MODEL_SCALES } from '../../local/detector/scales';

const CENTERNET_MODEL_NAME = MODEL_LABEL.centernet;
const CONFIDENCE_MAPPING_VERSION = MODEL_SCALES.centernet.mappingVersion;

const LEGACY_LOCAL = 'centernet-mobilenetv3-coco80 (@vladmandic/human 3.3.6, local)';
/** When the local confidence mapping became the piecewise-linear scale (git log -p -- local/detector/thresholds.ts). */
const MAPPING_2_AT = Date.parse('2026-11-25T16:30:06Z');

describe('model versions', () => {
  it("reads Rekognition's LabelModelVersion as rekognition-detect-labels and that version", () => {
    expect(parseModelVersion('3.0')).toEqual({ name: REKOGNITION_MODEL_NAME, version: '3.0' });
  });

  it("splits the local detector's version into its name and its file and mapping versions", () => {
    const wire = localModelVersion(CENTERNET_MODEL_NAME, '3.3.6', CONFIDENCE_MAPPING_VERSION);

    expect(wire).toBe(`local:centernet-mobilenetv3-coco80/3.3.6+mapping.${CONFIDENCE_MAPPING_VERSION}`);
    expect(parseModelVersion(wire)).toEqual({
      name: 'centernet-mobilenetv3-coco80',
      version: `3.3.6+mapping.${CONFIDENCE_MAPPING_VERSION}`,
    });
  });

  it('refuses to form a local version that could not be split back', () => {
    expect(() => localModelVersion('a/b', '1.0', 2)).toThrow(/name/);
    expect(() => localModelVersion('nanodet', '1 0', 2)).toThrow(/version/);
  });

  it('reads a legacy local answer as the mapping current when it was classified, never the current one by default', () => {
    expect(legacyMappingAt(MAPPING_2_AT - 1)).toBe(1);
    expect(legacyMappingAt(MAPPING_2_AT)).toBe(2);
    expect(parseModelVersion(LEGACY_LOCAL, MAPPING_2_AT - 60_000)).toEqual({
      name: 'centernet-mobilenetv3-coco80',
      version: '3.3.6+mapping.1',
    });
    expect(parseModelVersion(LEGACY_LOCAL, MAPPING_2_AT + 60_000)).toEqual({
      name: 'centernet-mobilenetv3-coco80',
      version: '3.3.6+mapping.2',
    });
    expect(parseModelVersion(LEGACY_LOCAL).version).toBe('3.3.6+mapping.unknown');
  });

  it("reads a record's model: the one it keeps, else its boxes' model at its classification time, else unknown", () => {
    const kept = { name: 'nanodet-m', version: '1.0.0+mapping.3' };
    expect(modelOfRecord({ model: kept, detections: { model: '3.0' } })).toEqual(kept);
    expect(modelOfRecord({ detections: { model: LEGACY_LOCAL }, classifiedAt: MAPPING_2_AT - 1 }).version).toBe('3.3.6+mapping.1');
    expect(modelOfRecord({ detections: { model: '3.0' } })).toEqual({ name: REKOGNITION_MODEL_NAME, version: '3.0' });
    expect(modelOfRecord({})).toEqual(UNKNOWN_MODEL);
  });

  it('counts a record as the current model only when both are known and the same', () => {
    const current = parseModelVersion(localModelVersion(CENTERNET_MODEL_NAME, '3.3.6', 2));
    const before = { detections: { model: LEGACY_LOCAL }, classifiedAt: MAPPING_2_AT - 1 };
    const after = { detections: { model: LEGACY_LOCAL }, classifiedAt: MAPPING_2_AT + 1 };

    expect(answeredByCurrentModel(after, current)).toBe(true);
    expect(answeredByCurrentModel(before, current)).toBe(false);
    expect(answeredByCurrentModel(after, undefined)).toBe(false);
    expect(answeredByCurrentModel({}, UNKNOWN_MODEL)).toBe(false);
    expect(
      answeredByCurrentModel({ model: { name: REKOGNITION_MODEL_NAME, version: '3.0' } }, { name: REKOGNITION_MODEL_NAME, version: '3.1' }),
    ).toBe(false);
  });

  it('names a model as one token for the exports', () => {
    expect(modelText({ name: REKOGNITION_MODEL_NAME, version: '3.0' })).toBe('rekognition-detect-labels@3.0');
  });
});
