// A batch's counters, and the rule that tells counters that cannot be right.
export interface Counts {
  /** Every upload counted: pending + success + fail + duplicate. */
  total: number;
  /** Claimed and still being classified. */
  pending: number;
  success: number;
  fail: number;
  duplicate: number;
  /** Of success: classified by copying the client's earlier result for the same pixels (no DetectLabels call). */
  reused: number;
  /** Of success: images whose isCat is a cat (a person's verdict wins). */
  cats: number;
  /** Of success: images with a person's verdict. */
  reviewed: number;
  /** Of reviewed: verdicts that disagree with the machine's at the batch's threshold. */
  corrected: number;
}

export const ZERO_COUNTS: Counts = {
  total: 0,
  pending: 0,
  success: 0,
  fail: 0,
  duplicate: 0,
  reused: 0,
  cats: 0,
  reviewed: 0,
  corrected: 0,
};

/**
 * Counters no sequence of whole writes can leave (docs/design.md, "A full disk"): every counter move keeps them, so
 * only a lost move (without transactions, a record written and its count refused) or a recount racing one can break
 * them. A batch that shows one is recounted from its records.
 */
export function countsCannotBeRight(c: Counts): boolean {
  if (Object.values(c).some((n) => n < 0)) return true;
  if (c.pending + c.success + c.fail + c.duplicate !== c.total) return true;
  return c.reused > c.success || c.cats > c.success || c.reviewed > c.success || c.corrected > c.reviewed;
}
