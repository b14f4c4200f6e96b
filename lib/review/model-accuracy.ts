// Each model's estimates on the same audit sample (docs/accuracy.md "Each model on the same sample"), after a
// re-detection left the audited images with two answers. Pure: the audited reviews with one model's verdicts in.
//
// The sample was drawn stratified by the verdict of the model answering at the draw, not by this model's, and not
// proportionally (the quarter floor over-samples the smaller stratum). So the reviews are post-stratified by this
// model's verdict, each post-stratum weighted by the batch's count of that verdict, and within a post-stratum each
// review counts by its draw weight (its draw stratum's images over its reviews: the inverse of its sampling rate), so
// that an over-sampled draw stratum does not tilt the cat share (a Hájek ratio within each post-stratum). For the model
// whose verdicts drew the sample the weights within a post-stratum are equal and this is the batch's own estimate.
// The weighted cat share enters the batch estimator (lib/review/accuracy.ts) as the post-stratum's cats among its
// reviews, its intervals drawn as the batch's are (the review count unchanged: a slight under-statement of the
// variance unequal weights add).
import { type AccuracyEstimates, estimateAccuracy, type StratumTally } from './accuracy';
import { type ByStratum, STRATA, type Stratum } from './audit-sample';

/** One reviewed audited image: its draw stratum, the person's verdict, and this model's verdict. */
export interface AuditedVerdict {
  stratum: Stratum;
  truth: boolean;
  verdict: boolean;
}

/**
 * The model's precision, recall, accuracy and cats: `drawn` the strata's sizes at the draw (the draw weights' numerators),
 * `population` the batch's images by this model's verdict (the post-strata's weights).
 */
export function estimateModelAccuracy(reviews: readonly AuditedVerdict[], drawn: ByStratum, population: ByStratum): AccuracyEstimates {
  const reviewedIn = (h: Stratum) => reviews.filter((r) => r.stratum === h).length;
  const weight: ByStratum = { cat: drawn.cat / (reviewedIn('cat') || 1), notCat: drawn.notCat / (reviewedIn('notCat') || 1) };
  const strata: StratumTally[] = STRATA.map((v) => {
    const mine = reviews.filter((r) => r.verdict === (v === 'cat'));
    const total = mine.reduce((s, r) => s + weight[r.stratum], 0);
    const cats = mine.reduce((s, r) => s + (r.truth ? weight[r.stratum] : 0), 0);
    const catsAmongReviews = total > 0 ? (cats / total) * mine.length : 0;
    const agree = v === 'cat' ? catsAmongReviews : mine.length - catsAmongReviews;
    return { stratum: v, images: population[v], sampled: mine.length, reviewed: mine.length, agree };
  });
  return estimateAccuracy(strata);
}
