// The local lister of an import (docs/design.md §16): pages through its source (lib/import/manifest.ts) and sends each
// image once (enqueueSourceObject), checkpointing after each page on the batch summary: a run killed mid-page lists
// that page again, and what it had sent comes back `sent-before`, counted then, so nothing is lost or counted twice.
// Beyond today's images quota it stops (`waiting-for-quota`, `resumesAt` the next UTC midnight) after the objects it
// had in hand: those the quota refused (objects are sent 16 at once, so a refused one may sit before a sent one) are
// held on the checkpoint and sent first when it goes on, so `enqueued` is always what was sent. Once the source ends
// it closes the batch with `expected` = the images sent. On AWS the fan-out is the
// engine's (S3 Batch Operations or a distributed map); its task calls enqueueSourceObject as this does.
import type { S3Client } from '@aws-sdk/client-s3';
import type { Batch } from '../domain/batch';
import type { ImportSource } from '../domain/import';
import type { ImportCheckpoint } from '../store/imports/imports';
import { type EnqueueDeps, type EnqueueOutcome, enqueueSourceObject, nextUtcMidnight } from './enqueue';
import { type Listed, type SourcePage, sourcePages } from './manifest';
import { isAllowed, isImageKey } from './sources';

/** The import's items as the lister moves them (lib/store/imports/imports.ts ImportStore). */
export interface ListerStore {
  read(clientId: string, batchId: string): Promise<{ batch: Batch; checkpoint: ImportCheckpoint } | undefined>;
  checkpoint(clientId: string, batchId: string, source: ImportSource, was: ImportCheckpoint, next: ImportCheckpoint): Promise<boolean>;
  endLive(clientId: string, batchId: string): Promise<void>;
}

export interface ListerDeps {
  s3: S3Client;
  imports: ListerStore;
  enqueue: EnqueueDeps;
  /** Closes the batch with the images it gets in all (BatchStore.close: it becomes done once they are recorded). */
  close(clientId: string, batchId: string, expected: number): Promise<void>;
  /** The client's allowed sources: a manifest's objects outside them are skipped. */
  sourcesOf(clientId: string): Promise<readonly string[]>;
  /** Keys a page (ListObjectsV2's most: 1,000). */
  pageSize?: number;
  /** Objects sent at once. */
  concurrency?: number;
  now?: () => number;
  /** Told after each checkpoint (tests stop the stack there). */
  onPage?: (checkpoint: ImportCheckpoint) => void;
}

/** How a run ended: the source listed, waiting for the quota's reset, or another run (or an erasure) has the import. */
type ListOutcome = { state: 'listed' } | { state: 'waiting-for-quota'; resumesAt: number } | { state: 'stale' };

/** Lists the import on from its checkpoint until the source ends, the quota is used up, or another run moves it. */
export async function listImport(deps: ListerDeps, clientId: string, batchId: string): Promise<ListOutcome> {
  const found = await deps.imports.read(clientId, batchId);
  if (!found || found.batch.deleting) return { state: 'stale' };
  const source = found.batch.import!.source;
  let checkpoint = found.checkpoint;
  if (checkpoint.state === 'waiting-for-quota' && (checkpoint.resumesAt ?? 0) > (deps.now ?? Date.now)())
    return { state: 'waiting-for-quota', resumesAt: checkpoint.resumesAt! };
  if (checkpoint.held?.length) {
    const sent = await sendHeld(deps, found.batch, checkpoint);
    if (!(await deps.imports.checkpoint(clientId, batchId, source, checkpoint, sent))) return { state: 'stale' };
    checkpoint = sent;
    deps.onPage?.(checkpoint);
    if (checkpoint.state === 'waiting-for-quota') return { state: 'waiting-for-quota', resumesAt: checkpoint.resumesAt! };
  }
  const next = await sourcePages(deps.s3, source);
  const allowed = await deps.sourcesOf(clientId);
  while (checkpoint.state !== 'listed') {
    const page = await next(checkpoint.cursor, deps.pageSize ?? 1000);
    const moved = await handlePage(deps, found.batch, page, checkpoint, allowed);
    if (!(await deps.imports.checkpoint(clientId, batchId, source, checkpoint, moved))) return { state: 'stale' };
    checkpoint = moved;
    deps.onPage?.(checkpoint);
    if (checkpoint.state === 'waiting-for-quota') return { state: 'waiting-for-quota', resumesAt: checkpoint.resumesAt! };
  }
  await deps.close(clientId, batchId, checkpoint.enqueued);
  await deps.imports.endLive(clientId, batchId);
  return { state: 'listed' };
}

const importTarget = (batch: Batch) => ({ clientId: batch.clientId, batchId: batch.batchId, expiresAt: batch.expiresAt });
const sentOrBefore = (o: EnqueueOutcome | 'skipped') => o === 'enqueued' || o === 'sent-before';

/** The objects the quota had refused, sent before the listing goes on; those it refuses again stay held. */
async function sendHeld(deps: ListerDeps, batch: Batch, was: ImportCheckpoint): Promise<ImportCheckpoint> {
  const target = importTarget(batch);
  const objects = was.held ?? [];
  const outcomes = await Promise.all(objects.map((o) => enqueueSourceObject(deps.enqueue, target, o)));
  const held = objects.filter((_, i) => outcomes[i] === 'over-quota');
  const { held: _held, resumesAt: _resumesAt, ...rest } = was;
  const enqueued = was.enqueued + outcomes.filter(sentOrBefore).length;
  if (held.length > 0) return { ...rest, enqueued, state: 'waiting-for-quota', resumesAt: nextUtcMidnight((deps.now ?? Date.now)()), held };
  return { ...rest, enqueued, state: 'listing' };
}

/** The checkpoint after the page's objects, or after the chunk in which the quota first refused one (it is held). */
async function handlePage(
  deps: ListerDeps,
  batch: Batch,
  page: SourcePage,
  was: ImportCheckpoint,
  allowed: readonly string[],
): Promise<ImportCheckpoint> {
  const target = importTarget(batch);
  const wanted = (l: Listed) => isImageKey(l.object.key) && isAllowed(allowed, l.object.bucket, l.object.key);
  const outcomes: (EnqueueOutcome | 'skipped')[] = [];
  const width = deps.concurrency ?? 16;
  for (let i = 0; i < page.objects.length && !outcomes.includes('over-quota'); i += width) {
    const chunk = page.objects.slice(i, i + width);
    outcomes.push(
      ...(await Promise.all(chunk.map((l) => (wanted(l) ? enqueueSourceObject(deps.enqueue, target, l.object) : ('skipped' as const))))),
    );
  }
  const held = page.objects.filter((_, i) => outcomes[i] === 'over-quota').map((l) => l.object);
  const last = outcomes.length > 0 ? page.objects[outcomes.length - 1]!.after : was.cursor;
  const progress = {
    listed: was.listed + outcomes.length,
    enqueued: was.enqueued + outcomes.filter(sentOrBefore).length,
    skipped: was.skipped + outcomes.filter((o) => o === 'skipped').length,
    ...(last !== undefined ? { cursor: last } : {}),
  };
  if (held.length > 0) return { ...progress, state: 'waiting-for-quota', resumesAt: nextUtcMidnight((deps.now ?? Date.now)()), held };
  return { ...progress, state: page.more ? 'listing' : 'listed' };
}
