// An import's source as `icecat import` takes it, and what `icecat import`, `icecat retry` and `icecat status` print
// of an import (docs/design.md §16): its source, the listing's progress in one line, the last line of a finished
// import (pure).
import type { BatchSummary, ImportSourceAddress, ImportSummary } from '../api/client-contract';
import { parseS3Uri } from '../import/sources';
import { UsageError } from './errors';

/** The source of `icecat import`: an s3://bucket/prefix argument, or --manifest s3://bucket/key; never both. */
export function importSourceOf(uri: string | undefined, manifest: string | undefined): ImportSourceAddress {
  if (uri !== undefined && manifest !== undefined)
    throw new UsageError('give either s3://bucket/prefix or --manifest s3://bucket/key, not both');
  const given = manifest ?? uri;
  if (given === undefined) throw new UsageError('say what to import: s3://bucket/prefix, or --manifest s3://bucket/key');
  let address: { bucket: string; prefix: string };
  try {
    address = parseS3Uri(given, manifest !== undefined ? '--manifest' : 'source');
  } catch {
    throw new UsageError(`${JSON.stringify(given)} is not an s3://bucket/${manifest !== undefined ? 'key' : 'prefix'} address`);
  }
  if (manifest === undefined) return address;
  if (address.prefix === '' || address.prefix.endsWith('/'))
    throw new UsageError(`--manifest ${manifest} names no object: give the s3://bucket/key of a CSV or of a manifest.json`);
  return { manifest };
}

/** s3://bucket/prefix, or "manifest s3://bucket/key". */
export const sourceAddress = (s: ImportSourceAddress): string =>
  'manifest' in s ? `manifest ${s.manifest}` : `s3://${s.bucket}/${s.prefix}`;

export const sameSource = (a: ImportSourceAddress, b: ImportSourceAddress): boolean => sourceAddress(a) === sourceAddress(b);

const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/**
 * The listing in one line: listing, waiting for the quota (until when), or listed. `counts`: the batch's, whose images
 * the ingest already has were sent even where the listing's checkpoint (`enqueued`) does not count them yet.
 */
export function importLine(imp: ImportSummary, counts?: { total: number; finished: number }): string {
  const sent = `${n(Math.max(imp.enqueued, counts?.total ?? 0), 'image')} sent`;
  const skipped = `${imp.skipped} skipped (not images by name)`;
  switch (imp.state) {
    case 'waiting-for-quota':
      return (
        `waiting for the quota: today's images quota is used up with ${sent}; ` +
        `the listing goes on at ${imp.resumesAt ?? 'the next 00:00 UTC'}, losing nothing`
      );
    case 'listed':
      return `listed ${sourceAddress(imp.source)}: ${n(imp.listed, 'key')}, ${sent}, ${skipped}`;
    default:
      return (
        `listing ${sourceAddress(imp.source)}: ${n(imp.listed, 'key')} listed, ${sent}, ${skipped}` +
        (counts === undefined ? '' : `; ${counts.finished} classified`)
      );
  }
}

/** The summary's import lines (`icecat status`), as [name, value] pairs. */
export function importSummaryLines(imp: ImportSummary): [string, string | number | null][] {
  return [
    ['source', sourceAddress(imp.source)],
    ['import', imp.state],
    ['listed', imp.listed],
    ['sent', imp.enqueued],
    ['skipped', imp.skipped],
    ['resumes', imp.resumesAt],
  ];
}

/** The last line of an import (or its retry): where the batch stands and what to run next. */
export function importFooter(s: BatchSummary): string {
  const c = s.counts;
  const parts = [`batch ${s.batchId}: ${s.status}`];
  if (s.import) parts.push(`${n(s.import.listed, 'key')} listed, ${n(s.import.enqueued, 'image')} sent, ${s.import.skipped} skipped`);
  parts.push(`${c.success} success, ${c.duplicate} duplicate, ${c.fail} fail, ${n(c.cats, 'cat')}`);
  parts.push(`icecat report ${s.batchId} has a row per object`);
  return parts.join('; ');
}
