// The MegaDetector output format's published rules (lila.science/megadetector-output-format, and what MegaDetector's
// validate_batch_results.py enforces), written out here as checks on a results file's text. The text, not only the
// parsed value: JSON.parse turns `1.0` into 1, and the format's readers (Python) tell a float from an int by it.

/** What is wrong with the file, as messages; empty when it follows the rules. */
export function megadetectorProblems(text: string): string[] {
  const problems: string[] = [];
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    return [`not JSON: ${(e as Error).message}`];
  }
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return ['not an object'];
  for (const key of ['info', 'images', 'detection_categories']) if (!(key in d)) problems.push(`no ${key}`);
  for (const key of Object.keys(d)) {
    if (!['info', 'images', 'detection_categories', 'classification_categories', 'classification_category_descriptions'].includes(key)) {
      problems.push(`non-standard key ${key}`);
    }
  }
  const info = d.info as Record<string, unknown> | undefined;
  if (!info || typeof info !== 'object') return [...problems, 'info is not an object'];
  if (typeof info.format_version !== 'string') problems.push('format_version is not a string');
  else if (!(Number(info.format_version) >= 1.6)) problems.push(`format_version ${info.format_version} is not 1.6 or later`);
  const categories = d.detection_categories as Record<string, unknown>;
  for (const [id, name] of Object.entries(categories ?? {})) {
    if (!/^\d+$/.test(id)) problems.push(`category id ${id} is not a non-negative integer`);
    if (typeof name !== 'string' || name.trim() === '') problems.push(`category ${id} has a blank name`);
  }
  if (!Array.isArray(d.images)) return [...problems, 'images is not a list'];
  d.images.forEach((im: Record<string, unknown>, i: number) => {
    if (typeof im !== 'object' || im === null) return problems.push(`image ${i} is not an object`);
    if (typeof im.file !== 'string') problems.push(`image ${i} has no file`);
    const failed = 'failure' in im && im.failure !== null;
    if (failed) {
      if (typeof im.failure !== 'string') problems.push(`image ${i} has a failure that is not a string`);
      if (im.detections !== null) problems.push(`image ${i} has a failure but detections ${JSON.stringify(im.detections)}, not null`);
    } else if (!Array.isArray(im.detections)) {
      problems.push(`image ${i} has no failure and no detections list`);
    }
    for (const det of Array.isArray(im.detections) ? (im.detections as Record<string, unknown>[]) : []) {
      if (typeof det.category !== 'string' || !(det.category in (categories ?? {})))
        problems.push(`image ${i} has an unmapped category ${String(det.category)}`);
      if (typeof det.conf !== 'number' || det.conf < 0 || det.conf > 1)
        problems.push(`image ${i} has a confidence ${String(det.conf)} outside 0-1`);
      const box = det.bbox as unknown;
      if (!Array.isArray(box) || box.length !== 4 || !box.every((v) => typeof v === 'number' && v >= 0 && v <= 1)) {
        problems.push(`image ${i} has a box ${JSON.stringify(box)} that is not 4 ratios`);
      } else if ((box[0] as number) + (box[2] as number) > 1 + 1e-9 || (box[1] as number) + (box[3] as number) > 1 + 1e-9) {
        problems.push(`image ${i} has a box ${JSON.stringify(box)} outside the image`);
      }
    }
  });
  // Floats as floats: every conf written with a fraction or an exponent.
  for (const m of text.matchAll(/"conf"\s*:\s*(-?[0-9.eE+-]+)/g)) {
    if (!/[.eE]/.test(m[1]!)) problems.push(`conf ${m[1]} is written as an integer`);
  }
  return problems;
}
