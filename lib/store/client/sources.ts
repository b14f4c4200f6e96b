// The sources a client may import from (docs/design.md §16): `s3://bucket/prefix` strings in a set on the client's
// registry item, set by the operator (npm run client:sources), read by POST /v1/batches with a source.
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { IceCatError } from '../../errors';
import { conditionFailed } from '../table/condition';
import { clientKey } from '../table/schema';
import { WriteExpression } from '../table/update-expression';

/** Sources set for a client never registered (client:create). */
export class UnknownSourceClientError extends IceCatError {
  override name = 'UnknownSourceClientError';
  readonly code = 'unregistered_client';
}

export class ClientSourcesStore {
  constructor(private readonly opts: { ddb: DynamoDBDocumentClient; tableName: string }) {}

  /** The client's allowed sources, in order. */
  async sourcesOf(clientId: string): Promise<string[]> {
    const out = await this.opts.ddb.send(
      new GetCommand({
        TableName: this.opts.tableName,
        Key: clientKey(clientId),
        ProjectionExpression: '#sources',
        ExpressionAttributeNames: { '#sources': 'sources' },
        ConsistentRead: true,
      }),
    );
    const sources = out.Item?.sources as Set<string> | string[] | undefined;
    return [...(sources ?? [])].sort();
  }

  /** Allows and takes back sources of a registered client; answers the sources now allowed. */
  async change(clientId: string, allow: readonly string[], deny: readonly string[]): Promise<string[]> {
    // One path may not be both added to and deleted from in one update: two, allow first.
    if (allow.length) await this.update(clientId, 'ADD', allow);
    if (deny.length) await this.update(clientId, 'DELETE', deny);
    return this.sourcesOf(clientId);
  }

  private async update(clientId: string, op: 'ADD' | 'DELETE', sources: readonly string[]): Promise<void> {
    const w = new WriteExpression({ sources: 'sources', partition: 'batch_id' });
    if (op === 'ADD') w.add('sources', ':sources', new Set(sources));
    else w.delete('sources', ':sources', new Set(sources));
    try {
      await this.opts.ddb.send(
        new UpdateCommand({ TableName: this.opts.tableName, Key: clientKey(clientId), ...w.when(w.exists('partition')).update() }),
      );
    } catch (err) {
      if (conditionFailed(err)) throw new UnknownSourceClientError(`client ${clientId} is not registered`, { cause: err });
      throw err;
    }
  }
}
