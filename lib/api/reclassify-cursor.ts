// POST …:reclassify in pages: how long one request flips records, and the cursor it answers to go on with.
import { InvalidParameterError } from './errors';

/**
 * The batches function stops after 10 s (serverless.yml), well inside API Gateway's 29 s: no page starts after 5 s,
 * and one page (500 records, flips 16 at a time) takes far less than the rest.
 */
export const RECLASSIFY_BUDGET_MS = 5_000;

/** A :reclassify cursor: where to go on, and for which threshold. It names no partition: the caller's client does. */
interface ReclassifyCursor {
  after: string;
  catMinConfidence: number;
}

export const encodeReclassifyCursor = (c: ReclassifyCursor): string => Buffer.from(JSON.stringify(c)).toString('base64url');

export function decodeReclassifyCursor(cursor: string, catMinConfidence: number): string {
  let c: Partial<ReclassifyCursor> | undefined;
  try {
    c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<ReclassifyCursor>;
  } catch {
    c = undefined;
  }
  if (typeof c?.after !== 'string' || typeof c.catMinConfidence !== 'number')
    throw new InvalidParameterError('not a cursor of :reclassify', { parameter: 'cursor' });
  if (c.catMinConfidence !== catMinConfidence) {
    throw new InvalidParameterError(
      `was given for catMinConfidence ${c.catMinConfidence}; send the same threshold, or none to start over`,
      { parameter: 'cursor' },
    );
  }
  return c.after;
}
