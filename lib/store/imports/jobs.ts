// An import's items on AWS (docs/design.md §16, docs/decisions/0043): the S3 Batch Operations job listing its source,
// recorded on the batch summary's `imp` (`jobId`, `attempt`); the progress the job's tasks make, kept in the same
// counters as the local lister's checkpoint (`listed`, `enqueued`, `skipped`), so the summary's `import` reads the
// same on both; the wait for the quota's reset; and the end of the listing once the job is over.
//
// A task may run more than once for one object (a redrive after TemporaryFailure, a second job after the quota's
// reset), so each object is counted on a mark of its own upload item (`imp_cnt`): with transactions the mark and the
// counters move in one TransactWriteItems, exactly once; without them (dynalite) the mark comes first, and a crash
// between the two loses that one object's count, never doubles it.
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import { toBatch } from '../table/attributes';
import { conditionFailed, conditionFailedAt } from '../table/condition';
import type { StoredImport } from '../table/import-item';
import { type BatchItem, batchKey, purgeAt, uploadItemKey } from '../table/schema';
import { transaction, transactWrite } from '../table/transact';
import { batchWrite, uploadWrite } from '../table/update-expression';

/** The object counted, by its upload item (the key the send mark uses: its URI, and its ETag when listed with one). */
export interface CountedObject {
  clientId: string;
  batchId: string;
  key: string;
  etag?: string;
  expiresAt: number;
}

export type CountedAs = 'enqueued' | 'skipped';

export class ImportJobsStore {
  constructor(private readonly opts: { ddb: DynamoDBDocumentClient; tableName: string; transactions: boolean }) {}

  private get table(): string {
    return this.opts.tableName;
  }

  /** The batch with its import as stored (the job's id and attempt too); undefined when gone or never an import. */
  async readJob(clientId: string, batchId: string): Promise<{ batch: Batch; listing: StoredImport } | undefined> {
    const out = await this.opts.ddb.send(new GetCommand({ TableName: this.table, Key: batchKey(clientId, batchId), ConsistentRead: true }));
    const item = out.Item as BatchItem | undefined;
    return item?.imp ? { batch: toBatch(item), listing: item.imp } : undefined;
  }

  /** The job now listing the import (its first, or one started again after the quota's reset): the import lists again. */
  async recordJob(clientId: string, batchId: string, job: { jobId: string; attempt: number }): Promise<void> {
    const w = batchWrite()
      .set(['import', 'jobId'], ':job', job.jobId)
      .set(['import', 'attempt'], ':attempt', job.attempt)
      .set(['import', 'state'], ':listing', 'listing')
      .remove(['import', 'resumesAt']);
    await this.opts.ddb.send(
      new UpdateCommand({ TableName: this.table, Key: batchKey(clientId, batchId), ...w.when(w.exists('import')).update() }),
    );
  }

  /** Counts the object in its import's progress, once however often its task runs; false when it was counted before. */
  async countObject(object: CountedObject, as: CountedAs): Promise<boolean> {
    const marked = uploadWrite()
      .set('importCounted', ':as', as)
      .setIfNotExists('expiresAt', ':ttl', object.expiresAt)
      .setIfNotExists('purgeAt', ':purge', purgeAt(object.expiresAt));
    const mark: UpdateCommandInput = {
      TableName: this.table,
      Key: uploadItemKey(object),
      ...marked.when(marked.notExists('importCounted')).update(),
    };
    const counted = batchWrite().increment(['import', 'listed'], ':one', 1).increment(['import', as], ':one', 1);
    const count: UpdateCommandInput = {
      TableName: this.table,
      Key: batchKey(object.clientId, object.batchId),
      ...counted.when(counted.exists('import')).update(),
    };
    if (this.opts.transactions) {
      try {
        await transactWrite(this.opts.ddb, transaction(mark, count));
        return true;
      } catch (err) {
        // Counted before (the mark's condition), or the batch is gone (the count's): nothing to count either way.
        if (conditionFailedAt(err, 0) || conditionFailedAt(err, 1)) return false;
        throw err;
      }
    }
    if (!(await this.conditional(mark))) return false;
    return this.conditional(count);
  }

  /** Today's quota is used up: the import waits for `resumesAt` (epoch ms), unless its listing is over. */
  async waitForQuota(clientId: string, batchId: string, resumesAt: number): Promise<void> {
    const w = batchWrite().set(['import', 'state'], ':waiting', 'waiting-for-quota').set(['import', 'resumesAt'], ':at', resumesAt);
    w.when(w.exists('import'), w.is(['import', 'state'], '<>', ':listed', 'listed'));
    await this.conditional({ TableName: this.table, Key: batchKey(clientId, batchId), ...w.update() });
  }

  /**
   * The job is over: the import is `listed`, and answers its progress (the batch then closes with `expected` = the
   * images enqueued). undefined when it was listed already or the batch is gone.
   */
  async finish(clientId: string, batchId: string, jobId: string): Promise<StoredImport | undefined> {
    const w = batchWrite().set(['import', 'state'], ':listed', 'listed').remove(['import', 'resumesAt']);
    w.when(w.exists('partition'), w.is(['import', 'jobId'], '=', ':job', jobId), w.is(['import', 'state'], '<>', ':listed', 'listed'));
    try {
      const out = await this.opts.ddb.send(
        new UpdateCommand({ TableName: this.table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' }),
      );
      return (out.Attributes as { imp?: StoredImport } | undefined)?.imp;
    } catch (err) {
      if (conditionFailed(err)) return undefined;
      throw err;
    }
  }

  private async conditional(input: UpdateCommandInput): Promise<boolean> {
    try {
      await this.opts.ddb.send(new UpdateCommand(input));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }
}
