// The shape of the IceCatWrangler table (DESIGN §2): key builders, index names and item types.
// resources/table.yml is the deployed definition; this file is how the code names what it holds.

export const BATCH_SK = '#BATCH';

export const INDEX = {
  batchStatus: 'batch-status',
  batchTime: 'batch-time',
  batchLogs: 'batch-logs',
  clientStatus: 'client-status',
  clientFprint: 'client-fprint',
  clientTime: 'client-time',
  clientCats: 'client-cats',
} as const;

export type OpStatus = 'pending' | 'processing' | 'success' | 'fail' | 'duplicate';

/** Bounds that keep an item far below DynamoDB's 400 KB. */
export const LIMITS = {
  dupFiles: 50,
  logLines: 100,
  logLineChars: 500,
  labels: 25,
  errMessageChars: 500,
} as const;

export interface Label {
  name: string;
  confidence: number;
}

/** Trimmed DetectLabels answer: what a debugger needs, without boxes or raw payload. */
export interface TrimmedLabels {
  model: string;
  labels: { name: string; confidence: number; parents: string[]; instances: number }[];
}

export interface ImageItem {
  batch_id: string;
  img_fprint: string;
  client_id: string;
  s3img_key: string;
  file_name: string;
  op_status: OpStatus;
  /** When the first upload of this image arrived; set by the claim, which writes no index key. */
  received_ts?: number;
  /**
   * `${op_status}#${upload_ts zero-padded}`: sort key of batch-status and client-status. Like upload_ts, written
   * with the result only, so a claimed image enters no status or time index until it has one.
   */
  status_ts?: string;
  upload_ts?: number;
  ttl: number;
  lease_until?: number;
  rek_ts?: number;
  rek_iscat?: boolean;
  labels?: Label[];
  rek_resp?: TrimmedLabels;
  /** Written only for cats: the sparse client-cats index. Equals upload_ts. */
  cat_ts?: number;
  /** Written only in debug mode: the sparse batch-logs index. */
  logs?: string[];
  log_ts?: number;
  phash?: string;
  width?: number;
  height?: number;
  format?: string;
  processed_key?: string;
  err_code?: string;
  err_msg?: string;
  dup_count?: number;
  dup_files?: string[];
}

/** The batch summary: one GetItem answers a batch's state. No client_id/upload_ts, so it stays out of every index. */
export interface BatchItem {
  batch_id: string;
  img_fprint: typeof BATCH_SK;
  owner_id: string;
  created_ts: number;
  debug: boolean;
  retention_days: number;
  ttl: number;
  /** Files declared at creation (POST /v1/batches); absent for batches opened by an upload. */
  expected?: number;
  n_total: number;
  n_success: number;
  n_fail: number;
  n_duplicate: number;
  n_cats: number;
}

export const statusTs = (status: OpStatus, uploadTs: number): string =>
  `${status}#${String(uploadTs).padStart(15, '0')}`;

export const batchKey = (batchId: string) => ({ batch_id: batchId, img_fprint: BATCH_SK });
export const imageKey = (batchId: string, fprint: string) => ({ batch_id: batchId, img_fprint: fprint });

export const nowSeconds = (ms: number = Date.now()): number => Math.floor(ms / 1000);
export const ttlFor = (fromMs: number, retentionDays: number): number =>
  nowSeconds(fromMs) + Math.round(retentionDays * 86400);
