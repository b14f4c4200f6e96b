// Whether a batch is marked for erasure: the one summary read of the erase function, apart from BatchStore so that its
// bundle (and so its role) carries only this call.
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { BATCH_ATTRIBUTES, batchNames } from '../table/attributes';
import { batchKey } from '../table/schema';

/** Whether the batch's summary exists and is marked as being erased (DELETE). */
export async function isMarkedForErasure(ddb: DynamoDBDocumentClient, table: string, clientId: string, batchId: string): Promise<boolean> {
  const out = await ddb.send(
    new GetCommand({
      TableName: table,
      Key: batchKey(clientId, batchId),
      ProjectionExpression: '#deleting',
      ExpressionAttributeNames: batchNames('deleting'),
      ConsistentRead: true,
    }),
  );
  return out.Item?.[BATCH_ATTRIBUTES.deleting] === true;
}
