// An import's items (docs/design.md §2 "An import", §16): its progress and the lister's checkpoint on the batch
// summary (`imp`), the running imports the local lister resumes at start (partition IMPORT#LIVE#, one item per batch,
// read by a Query on its key), the objects sent (their upload items, which name them: the completion report), and a
// failed image put back for :retry. Every read is a GetItem or a Query on a key condition.
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import type { Image, SourceObject } from '../../domain/image';
import type { ImportProgress, ImportSource } from '../../domain/import';
import { toBatch, toImage } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import type { StoredImport } from '../table/import-item';
import {
  BATCH_SK,
  type BatchItem,
  batchKey,
  batchPartition,
  type ImageItem,
  INDEX,
  imageKey,
  UPLOAD_ITEM_PREFIX,
  type UploadItem,
  uploadItemKey,
} from '../table/schema';
import { batchWrite, imageWrite } from '../table/update-expression';

/** Two '#': no batch partition (`{clientId}#{batchId}`, one '#') is ever this. */
const LIVE_PARTITION = 'IMPORT#LIVE#';

/** An import's progress with the lister's checkpoint: where the next page starts (undefined: at the source's start). */
export interface ImportCheckpoint extends ImportProgress {
  cursor?: string;
  /**
   * Objects before the cursor that today's quota refused while the objects sent beside them went through: the
   * listing sends these first when it goes on, so `enqueued` counts exactly what was sent.
   */
  held?: SourceObject[];
}

/** One object an import sent, from its upload item: the record it ended as is found by `fprint` (noted by the ingest). */
export interface SentObject {
  source: SourceObject;
  fprint?: string;
}

export class ImportStore {
  constructor(private readonly opts: { ddb: DynamoDBDocumentClient; tableName: string }) {}

  private get table(): string {
    return this.opts.tableName;
  }

  /** Notes a running import, before its batch is made: one whose batch never came is dropped when resumed. */
  async markLive(clientId: string, batchId: string): Promise<void> {
    await this.opts.ddb.send(
      new PutCommand({
        TableName: this.table,
        Item: { batch_id: LIVE_PARTITION, img_fprint: batchPartition(clientId, batchId), owner_id: clientId, name: batchId },
      }),
    );
  }

  async endLive(clientId: string, batchId: string): Promise<void> {
    await this.opts.ddb.send(
      new DeleteCommand({ TableName: this.table, Key: { batch_id: LIVE_PARTITION, img_fprint: batchPartition(clientId, batchId) } }),
    );
  }

  /** The running imports (a Query of one partition, paged). */
  async liveImports(): Promise<{ clientId: string; batchId: string }[]> {
    const out: { clientId: string; batchId: string }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.opts.ddb.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'batch_id = :live',
          ExpressionAttributeValues: { ':live': LIVE_PARTITION },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) out.push({ clientId: String(item.owner_id), batchId: String(item.name) });
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /** The batch with its import's checkpoint; undefined when it is gone or was never an import. */
  async read(clientId: string, batchId: string): Promise<{ batch: Batch; checkpoint: ImportCheckpoint } | undefined> {
    const out = await this.opts.ddb.send(new GetCommand({ TableName: this.table, Key: batchKey(clientId, batchId), ConsistentRead: true }));
    const item = out.Item as BatchItem | undefined;
    if (!item?.imp) return undefined;
    const batch = toBatch(item);
    const { source: _source, ...progress } = batch.import!;
    return {
      batch,
      checkpoint: {
        ...progress,
        ...(item.imp.cursor !== undefined ? { cursor: item.imp.cursor } : {}),
        ...(item.imp.held?.length ? { held: item.imp.held } : {}),
      },
    };
  }

  /**
   * Moves the import on from the checkpoint `was` to `next`, only if nobody moved it meanwhile (another lister of the
   * same batch: the loser stops). false when it had moved, or the batch is gone.
   */
  async checkpoint(
    clientId: string,
    batchId: string,
    source: ImportSource,
    was: ImportCheckpoint,
    next: ImportCheckpoint,
  ): Promise<boolean> {
    const stored: StoredImport = { source, ...next };
    const w = batchWrite().set('import', ':imp', withoutUndefined(stored));
    w.when(
      w.exists('partition'),
      w.is(['import', 'state'], '=', ':state', was.state),
      w.is(['import', 'listed'], '=', ':listed', was.listed),
      w.is(['import', 'enqueued'], '=', ':enqueued', was.enqueued),
      was.cursor === undefined ? w.notExists(['import', 'cursor']) : w.is(['import', 'cursor'], '=', ':cursor', was.cursor),
    );
    try {
      await this.opts.ddb.send(new UpdateCommand({ TableName: this.table, Key: batchKey(clientId, batchId), ...w.update() }));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  /** The objects the import sent, a page at a time (the upload items' partition, in key order: a Query). */
  async sentObjects(
    clientId: string,
    batchId: string,
    start?: Record<string, unknown>,
  ): Promise<{ items: SentObject[]; next?: Record<string, unknown> }> {
    const page = await this.opts.ddb.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'batch_id = :uploads',
        FilterExpression: 'attribute_exists(#src)',
        ProjectionExpression: '#src, #fprint',
        ExpressionAttributeNames: { '#src': 'imp_src', '#fprint': 'seen_fprint' },
        ExpressionAttributeValues: { ':uploads': UPLOAD_ITEM_PREFIX + batchPartition(clientId, batchId) },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const items = ((page.Items ?? []) as Partial<UploadItem>[]).flatMap((item) =>
      item.imp_src ? [{ source: item.imp_src, ...(item.seen_fprint ? { fprint: item.seen_fprint } : {}) }] : [],
    );
    return { items, ...(page.LastEvaluatedKey ? { next: page.LastEvaluatedKey } : {}) };
  }

  /** Records of the batch by fingerprint (BatchGetItem, ≤ 100 keys a request, unprocessed keys sent again). */
  async records(clientId: string, batchId: string, fprints: readonly string[]): Promise<Map<string, Image>> {
    const found = new Map<string, Image>();
    const unique = [...new Set(fprints)];
    for (let i = 0; i < unique.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((f) => imageKey(clientId, batchId, f));
      for (let round = 0; keys && keys.length > 0 && round < 8; round++) {
        const out: BatchGetCommandOutput = await this.opts.ddb.send(
          new BatchGetCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[this.table] ?? []) {
          const image = toImage(item as Partial<ImageItem>);
          found.set(image.fprint, image);
        }
        keys = out.UnprocessedKeys?.[this.table]?.Keys;
      }
    }
    return found;
  }

  /**
   * The batch's failed imported images: pattern 2 (LSI batch-status, range `fail#`) for their keys, the records by
   * BatchGetItem (the source is not among the index's projected attributes).
   */
  async failedImports(clientId: string, batchId: string): Promise<(Image & { source: SourceObject })[]> {
    const fprints: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page: QueryCommandOutput = await this.opts.ddb.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: INDEX.batchStatus,
          KeyConditionExpression: 'batch_id = :p AND begins_with(status_ts, :fail)',
          ProjectionExpression: 'img_fprint',
          ExpressionAttributeValues: { ':p': batchPartition(clientId, batchId), ':fail': 'fail#' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) fprints.push(String(item.img_fprint));
      start = page.LastEvaluatedKey;
    } while (start);
    const records = await this.records(clientId, batchId, fprints);
    return [...records.values()].filter((i): i is Image & { source: SourceObject } => i.status === 'fail' && i.source !== undefined);
  }

  /**
   * A failed imported image put back to be sent again (:retry): its `fail` record deleted (only while it is that
   * record), its counters moved back (total and fail − 1), its object's upload item deleted (attempts, quota and send
   * marks: it counts against today's quota again as it is sent), and the batch no longer done. false when the record
   * was not a failed import any more.
   */
  async putBack(clientId: string, batchId: string, image: Image & { source: SourceObject }): Promise<boolean> {
    const { ddb } = this.opts;
    const failed = imageWrite();
    failed.when(failed.is('status', '=', ':fail', 'fail'), failed.exists('source'));
    try {
      await ddb.send(new DeleteCommand({ TableName: this.table, Key: imageKey(clientId, batchId, image.fprint), ...failed.condition() }));
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
    await ddb.send(
      new DeleteCommand({
        TableName: this.table,
        Key: uploadItemKey({ clientId, batchId, key: image.key ?? '', ...(image.etag !== undefined ? { etag: image.etag } : {}) }),
      }),
    );
    const back = batchWrite().add('total', ':minus', -1).add('fail', ':minus', -1).remove('doneAt', 'callbackDue');
    const summary = { batch_id: batchPartition(clientId, batchId), img_fprint: BATCH_SK };
    await ddb.send(new UpdateCommand({ TableName: this.table, Key: summary, ...back.when(back.exists('partition')).update() }));
    return true;
  }
}

const withoutUndefined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
