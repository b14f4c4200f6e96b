// The write of the model that would answer now (current-model.ts reads it): by the ingest when an answer carries
// another model than the one it last knew, and by the local stack at its start. Apart from the reads so that the
// read-only API function's bundle carries no PutItem (the deploy test checks each role against its bundle's sends).
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ModelVersion } from '../../domain/detection';
import { CURRENT_MODEL_KEY, type CurrentModelItem } from './current';

/** Records the model an answer came from as the one answering now. */
export async function recordCurrentModel(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string },
  model: ModelVersion,
  now: number,
): Promise<void> {
  const item: CurrentModelItem = { ...CURRENT_MODEL_KEY, rek_model: { name: model.name, version: model.version }, learned_ts: now };
  await ctx.ddb.send(new PutCommand({ TableName: ctx.tableName, Item: item }));
}
