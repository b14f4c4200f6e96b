// An imported object's send mark on its own upload item (docs/design.md §16; lib/import/enqueue.ts): `sending` before
// its message goes to the uploads queue, `sent` after, so a page listed again after a crash sends no object twice.
import { type DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { SourceObject } from '../../domain/image';
import type { UploadRef } from '../../domain/upload';
import { purgeAt, type UploadItem, uploadItemKey } from '../table/schema';
import { uploadWrite } from '../table/update-expression';

/** Marks the object `sending` unless it is `sent`; answers the mark it had. */
export function beginSendRequest(table: string, u: UploadRef & { source?: SourceObject }): UpdateCommandInput {
  const w = uploadWrite()
    .setIfNotExists('importSend', ':sending', 'sending')
    .setIfNotExists('expiresAt', ':ttl', u.expiresAt)
    .setIfNotExists('purgeAt', ':purge', purgeAt(u.expiresAt));
  if (u.source !== undefined) w.set('importSource', ':source', u.source);
  return {
    TableName: table,
    Key: uploadItemKey(u),
    ...w.update(),
    // The whole old item, not UPDATED_OLD: an attribute SET to the value it had (if_not_exists of a `sent` mark) is
    // not "updated" to every implementation (moto answers no attributes then), and the mark it had is the answer.
    ReturnValues: 'ALL_OLD',
  };
}

export function sentRequest(table: string, u: UploadRef): UpdateCommandInput {
  return { TableName: table, Key: uploadItemKey(u), ...uploadWrite().set('importSend', ':sent', 'sent').update() };
}

export class ImportMarksStore {
  constructor(private readonly opts: { ddb: DynamoDBDocumentClient; tableName: string }) {}

  async begin(ref: UploadRef & { source?: SourceObject }): Promise<'new' | 'unfinished' | 'sent'> {
    const out = await this.opts.ddb.send(new UpdateCommand(beginSendRequest(this.opts.tableName, ref)));
    const was = (out.Attributes as Partial<UploadItem> | undefined)?.imp_send;
    return was === 'sent' ? 'sent' : was === 'sending' ? 'unfinished' : 'new';
  }

  async sent(ref: UploadRef): Promise<void> {
    await this.opts.ddb.send(new UpdateCommand(sentRequest(this.opts.tableName, ref)));
  }
}
