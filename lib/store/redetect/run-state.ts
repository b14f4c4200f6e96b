// A re-detection run as the batch summary holds it (its `rd_*` attributes), read without a request: what the paging
// and the API need of a run without bundling the run's writes (lib/store/redetect/run.ts), and the write expressions
// of the summary's run and of an image's part in it, which the run, the marks and the answers build on.
import type { ModelVersion } from '../../domain/detection';
import { BATCH_ATTRIBUTES, type BatchAttribute, COUNTER_ATTRIBUTES, IMAGE_ATTRIBUTES, type ImageAttribute } from '../table/attributes';
import { WriteExpression } from '../table/update-expression';

/** The summary's attributes of a run beyond rd_run and rd_left (attributes.ts names those two), by their placeholders' names. */
const RUN_ATTRIBUTES = {
  rdRun: 'rd_run',
  rdLive: 'rd_live',
  rdLeft: 'rd_left',
  rdNext: 'rd_next',
  rdAll: 'rd_all',
  rdModel: 'rd_model',
  rdDay: 'rd_day',
  rdMoved: 'rd_moved',
  rdCalls: 'rd_calls',
  rdImages: 'rd_images',
  rdResumed: 'rd_resumed',
  rdResumes: 'rd_resumes',
  rdSeen: 'rd_seen',
} as const;

type RunAttribute = keyof typeof RUN_ATTRIBUTES;

/** A write to a batch summary that moves its run: the summary's attributes and the run's (`#rdNext` → rd_next). */
export const runWrite = (): WriteExpression<BatchAttribute | RunAttribute> =>
  new WriteExpression({ ...BATCH_ATTRIBUTES, ...COUNTER_ATTRIBUTES, ...RUN_ATTRIBUTES });

/** An image's attributes of a run beyond its mark (rd_run): when it was queued, its claim's lease, the run that answered it. */
const IMAGE_RUN_ATTRIBUTES = { rdAt: 'rd_at', rdClaim: 'rd_claim', rdLast: 'rd_last' } as const;

/** The same as a projection names them (`#rdClaim` → rd_claim): what the plan reads of an image's part in a run. */
export const IMAGE_RUN_NAMES = Object.fromEntries(Object.entries(IMAGE_RUN_ATTRIBUTES).map(([key, name]) => [`#${key}`, name]));

/** A write to an image that a run moves: its attributes and the run's (`#rdClaim` → rd_claim). */
export const imageRunWrite = (): WriteExpression<ImageAttribute | keyof typeof IMAGE_RUN_ATTRIBUTES> =>
  new WriteExpression({ ...IMAGE_ATTRIBUTES, ...IMAGE_RUN_ATTRIBUTES });

/** Every attribute of a run on the summary (REMOVEd at the run's end or its release). */
export const RUN_PARTS = Object.keys(RUN_ATTRIBUTES) as RunAttribute[];

/** rd_live while a run is going: the one partition of the sparse redetect-runs index (every running batch's key). */
export const REDETECT_LIVE = 'REDETECT#RUN';

/** Where the start's paging begins: before the first image (the summary's sort key sorts first). */
export const FIRST_PAGE = '#BATCH';

/** Records per page of a run's start: each page charged, marked and queued (the dry run reads 500 at a time). */
export const START_PAGE = 100;

/** A run as its summary holds it. */
export interface RunState {
  run: string;
  /** Images marked and not answered yet. */
  left: number;
  /** Where the start's next page begins; undefined once every page is started. */
  next?: string;
  all: boolean;
  model?: ModelVersion;
  day: string;
  /** Epoch ms of the start's last page (or of the run taken). */
  movedAt: number;
  /** Re-detections charged (DetectLabels calls owed), and the uploads they answer. */
  calls: number;
  images: number;
  resumedAt?: number;
  /** Resumes in a row that saw no answer come. */
  resumes: number;
  /** rd_left at the last resume. */
  seen?: number;
}

export function runStateOf(item: Record<string, unknown> | undefined): RunState | undefined {
  if (typeof item?.rd_run !== 'string') return undefined;
  const num = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0));
  const model = item.rd_model as ModelVersion | undefined;
  return {
    run: item.rd_run,
    left: num(item.rd_left),
    ...(typeof item.rd_next === 'string' ? { next: item.rd_next } : {}),
    all: item.rd_all === true,
    ...(model && typeof model.name === 'string' ? { model: { name: model.name, version: String(model.version) } } : {}),
    day: String(item.rd_day ?? ''),
    movedAt: num(item.rd_moved),
    calls: num(item.rd_calls),
    images: num(item.rd_images),
    ...(typeof item.rd_resumed === 'number' ? { resumedAt: item.rd_resumed } : {}),
    resumes: num(item.rd_resumes),
    ...(typeof item.rd_seen === 'number' ? { seen: item.rd_seen } : {}),
  };
}
