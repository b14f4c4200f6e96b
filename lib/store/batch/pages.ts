// A batch's every image, a page at a time: what an export streams and what the near-duplicate groups are computed
// over. Apart from reader.ts so that a function bundles only this Query, not the listings' cursors.
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../domain/image';
import { IMAGE_ATTRIBUTES, type ImageAttribute, toImage } from '../table/attributes';
import { type ImageItem, IN_PROGRESS_LISTING_ATTRIBUTES, nowSeconds } from '../table/schema';
import { batchResultsRequest } from './images';

export interface BatchPagesOptions {
  /** Items evaluated per Query (default 500); a page also ends at DynamoDB's 1 MB. */
  pageSize?: number;
  /** The image's fields to read, by their domain names (default: what a listing shows, the duplicates' names included). */
  attributes?: readonly ImageAttribute[];
  /** Fields to read besides what a listing shows (when `attributes` is not given). */
  alsoRead?: readonly ImageAttribute[];
}

/**
 * Items an export reads a Query (a CSV page's answer is ~180 KB). A page lives from its answer's parsing to its text;
 * what a page allocates in that time (~4 MB for CSV at 200 items, ~10 MB at 500) must stay well under V8's young
 * generation (16 MB semi-spaces), or a scavenge finds the page alive twice and promotes it to the old space as
 * garbage that grows the heap until a full collection (docs/design.md, "Export memory").
 */
export const EXPORT_PAGE_ITEMS = 200;

/**
 * What the CSV and JSON Lines rows read (lib/export/rows.ts): a listing's fields less what no column shows (the cat
 * boxes, the processed key, the error message, reuse, the expiry). received_ts gives uploaded_at while an upload is
 * still classifying. Every attribute not read is bytes neither sent nor parsed (docs/design.md, "Export memory").
 */
export const ROWS_READ = {
  attributes: [
    'fprint',
    'fileName',
    'status',
    'isCat',
    'review',
    'catConfidence',
    'labels',
    'uploadedAt',
    'receivedAt',
    'classifiedAt',
    'duplicates',
    'duplicateFiles',
    'errorCode',
    'capturedAt',
    'camera',
    'location',
    // The model column: the model kept, else (a record written before records kept it) the model its boxes' compact
    // string names, dated by its classification time.
    'model',
    'detections',
  ],
  pageSize: EXPORT_PAGE_ITEMS,
} as const satisfies BatchPagesOptions;

/**
 * What the MegaDetector file reads (lib/export/megadetector.ts): every box (the cat's and the other labels'), the
 * model, the size, the capture time, the review and the outcome, and no labels list, times or verdict, which it
 * does not write.
 */
export const DETECTIONS_READ = {
  attributes: [
    'fprint',
    'fileName',
    'status',
    'review',
    'cats',
    'detections',
    'model',
    'classifiedAt',
    'width',
    'height',
    'capturedAt',
    'errorCode',
    'duplicates',
    'duplicateFiles',
  ],
  pageSize: EXPORT_PAGE_ITEMS,
} as const satisfies BatchPagesOptions;

/**
 * Every image of a batch, a page at a time (access pattern 1 on the table, LastEvaluatedKey carried internally).
 * Expired images are left out as every read does; the summary item never comes.
 */
export async function* batchImagePages(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string; now?: () => number },
  clientId: string,
  batchId: string,
  opts: BatchPagesOptions = {},
): AsyncGenerator<Image[]> {
  const nowS = nowSeconds((ctx.now ?? Date.now)());
  const projection = opts.attributes?.map((name) => IMAGE_ATTRIBUTES[name]) ?? [
    ...IN_PROGRESS_LISTING_ATTRIBUTES,
    ...(opts.alsoRead ?? []).map((name) => IMAGE_ATTRIBUTES[name]),
  ];
  const plan = batchResultsRequest({ tableName: ctx.tableName, clientId, batchId, nowS }, projection);
  let startKey: Record<string, unknown> | undefined;
  do {
    // Neither the answer nor the page is kept while the next page is read (a generator's locals outlive its yield):
    // a page held across the next Query would be promoted to V8's old space (lib/export/pages.ts).
    let out: QueryCommandOutput | undefined = await ctx.ddb.send(
      new QueryCommand({ ...plan.input, Limit: opts.pageSize ?? 500, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
    );
    startKey = out.LastEvaluatedKey;
    let page: Image[] | undefined = ((out.Items ?? []) as ImageItem[]).map(toImage);
    // eslint-disable-next-line no-useless-assignment -- dropped before the next page is awaited (lib/export/pages.ts)
    out = undefined;
    yield page;
    // eslint-disable-next-line no-useless-assignment -- dropped before the next page is awaited (lib/export/pages.ts)
    page = undefined;
  } while (startKey);
}

/**
 * A batch's images as an export reads them (lib/api/export-batch.ts ExportReads): the CSV and JSON Lines rows' fields
 * (`rows`, ROWS_READ) or the MegaDetector file's (`detections`, DETECTIONS_READ), a page at a time, each page
 * dropped before the next Query as batchImagePages drops it.
 */
export class BatchImagePages {
  constructor(private readonly ctx: { ddb: DynamoDBDocumentClient; tableName: string; now?: () => number }) {}

  imagePages(clientId: string, batchId: string, read: 'rows' | 'detections'): AsyncGenerator<Image[]> {
    return batchImagePages(this.ctx, clientId, batchId, read === 'detections' ? DETECTIONS_READ : ROWS_READ);
  }
}
