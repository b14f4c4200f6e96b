// The model that would answer now (docs/decisions/0031-model-versions.md): one item, written by the ingest when an
// answer carries another model than the one it last knew (and by the local stack at its start, from its detector's
// answer), read wherever an earlier answer could stand in for a new one: the reuse across batches and
// POST /v1/fingerprints:known. Beside it, the model facts of records, read by key, and which of them that model gave.
// Its write is current-model-write.ts: the read-only API function's bundle carries no PutItem.
import { type BatchGetCommandInput, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ModelVersion } from '../../domain/detection';
import { answeredByCurrentModel, type RecordModelFacts } from '../../model-version';
import { decodeDetections } from '../table/detections';

/** Two '#' keep it apart from every batch partition (schema.ts); no index key, so no listing or sweep meets it. */
export const CURRENT_MODEL_KEY = { batch_id: 'MODEL##CURRENT', img_fprint: '#MODEL' } as const;

interface Ctx {
  ddb: DynamoDBDocumentClient;
  tableName: string;
}

/** reader.ts batchGetAll (every key answered, unprocessed ones asked again), passed in: reader.ts imports this file. */
export type BatchGetAll = (ctx: Ctx, request: BatchGetCommandInput['RequestItems']) => Promise<Record<string, unknown>[]>;

/** The item: the model, in the attribute a record keeps its own in (rek_model), and when it was learnt. */
export interface CurrentModelItem {
  batch_id: string;
  img_fprint: string;
  rek_model: ModelVersion;
  learned_ts: number;
}

const isModel = (m: unknown): m is ModelVersion =>
  typeof m === 'object' && m !== null && typeof (m as ModelVersion).name === 'string' && typeof (m as ModelVersion).version === 'string';

/** The model that would answer now, as last learnt; undefined when no answer was ever recorded. */
export async function readCurrentModel(ctx: Ctx): Promise<ModelVersion | undefined> {
  const out = await ctx.ddb.send(new GetCommand({ TableName: ctx.tableName, Key: CURRENT_MODEL_KEY, ConsistentRead: true }));
  const model = (out.Item as Partial<CurrentModelItem> | undefined)?.rek_model;
  return isModel(model) ? { name: model.name, version: model.version } : undefined;
}

/** A record's key. */
export interface RecordKey {
  batch_id: string;
  img_fprint: string;
}

/** What a model check reads of a record (and of the model item, which keeps rek_model too). */
const MODEL_FACTS = { '#p': 'batch_id', '#f': 'img_fprint', '#m': 'rek_model', '#d': 'rek_dets', '#t': 'rek_ts' };

export interface ModelFacts extends RecordModelFacts {
  /** The record's other labels' boxes, decoded (what a reuse copies). */
  detections?: ReturnType<typeof decodeDetections>;
}

/**
 * The model that would answer now, and the model facts of these records (at most 99: one BatchGetItem with the
 * model item), keyed `batch_id|img_fprint`. Strongly consistent.
 */
export async function modelFactsOf(
  ctx: Ctx,
  batchGetAll: BatchGetAll,
  keys: readonly RecordKey[],
): Promise<{ current?: ModelVersion; facts: Map<string, ModelFacts> }> {
  const items = await batchGetAll(ctx, {
    [ctx.tableName]: {
      Keys: [CURRENT_MODEL_KEY, ...dedupe(keys)],
      ProjectionExpression: Object.keys(MODEL_FACTS).join(', '),
      ExpressionAttributeNames: MODEL_FACTS,
      ConsistentRead: true,
    },
  });
  let current: ModelVersion | undefined;
  const facts = new Map<string, ModelFacts>();
  for (const item of items) {
    if (item.batch_id === CURRENT_MODEL_KEY.batch_id) {
      if (isModel(item.rek_model)) current = item.rek_model;
      continue;
    }
    const detections = decodeDetections(item.rek_dets);
    facts.set(keyText(item as unknown as RecordKey), {
      ...(isModel(item.rek_model) ? { model: item.rek_model } : {}),
      ...(detections ? { detections } : {}),
      ...(typeof item.rek_ts === 'number' ? { classifiedAt: item.rek_ts } : {}),
    });
  }
  return { ...(current ? { current } : {}), facts };
}

export const keyText = (k: RecordKey): string => `${k.batch_id}|${k.img_fprint}`;

function dedupe(keys: readonly RecordKey[]): RecordKey[] {
  const seen = new Map(keys.map((k) => [keyText(k), { batch_id: k.batch_id, img_fprint: k.img_fprint }]));
  return [...seen.values()];
}

/** Of these records, the keys of those the current model answered. */
export async function answeredNow(ctx: Ctx, batchGetAll: BatchGetAll, keys: readonly RecordKey[]): Promise<Set<string>> {
  const now = new Set<string>();
  for (let i = 0; i < keys.length; i += FACTS_PER_READ) {
    const { current, facts } = await modelFactsOf(ctx, batchGetAll, keys.slice(i, i + FACTS_PER_READ));
    for (const [k, f] of facts) if (answeredByCurrentModel(f, current)) now.add(k);
  }
  return now;
}

/** Records one model read asks for: BatchGetItem's 100 keys, the model item one of them. */
export const FACTS_PER_READ = 99;
