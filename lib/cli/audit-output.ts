// What `icecat audit` and `icecat accuracy` print (docs/accuracy.md): the draw's strata, and the estimates with their
// 95 % intervals beside the strata's tallies.
import type { Accuracy, AuditResult, Estimate, ModelAccuracy } from '../api/client-contract';
import { table } from './output';

const STRATUM_NAMES = { cat: 'machine: cat', notCat: 'machine: not cat' } as const;

export function auditLines(a: AuditResult): string {
  const strata = table(
    ['stratum', 'images', 'sampled', 'drawn now'],
    a.strata.map((s) => [STRATUM_NAMES[s.stratum], String(s.images), String(s.sampled), String(s.drawn)]),
  );
  const more = a.drawn === 0 ? 'no image was left to draw' : `drew ${a.drawn} (seed ${a.seed}); the sample holds ${a.sampled}`;
  return `${more}\n${strata}\nreview them: icecat images ${a.batchId} --audit pending, then icecat review; read icecat accuracy ${a.batchId}`;
}

const share = (v: number) => `${(Math.round(v * 1000) / 10).toFixed(1)}%`;

const estimateCells = (e: Estimate | null, show: (v: number) => string): string[] =>
  e === null ? ['-', '-'] : [show(e.estimate), `${show(e.low)} – ${show(e.high)}`];

export function accuracyLines(batchId: string, a: Accuracy): string {
  const estimates = table(
    ['estimate', 'value', '95% interval'],
    [
      ['precision', ...estimateCells(a.precision, share)],
      ['recall', ...estimateCells(a.recall, share)],
      ['accuracy', ...estimateCells(a.accuracy, share)],
      ['cats', ...estimateCells(a.cats, (v) => String(Math.round(v)))],
    ],
  );
  const strata = table(
    ['stratum', 'images', 'sampled', 'reviewed', 'agree'],
    a.strata.map((s) => [STRATUM_NAMES[s.stratum], String(s.images), String(s.sampled), String(s.reviewed), String(s.agree)]),
  );
  const hint =
    a.sampled === 0
      ? `\nno audit sample yet: icecat audit ${batchId} --size 100, then review the drawn images`
      : a.reviewed === 0
        ? `\nno audited image reviewed yet: icecat images ${batchId} --audit pending`
        : '';
  return `${estimates}\n\n${strata}${a.models ? `\n\n${modelsTable(a.models)}` : ''}${hint}`;
}

/** After a re-detection: one row per model, its estimates on the same audited reviews. */
function modelsTable(models: readonly ModelAccuracy[]): string {
  const cell = (e: Estimate | null, show: (v: number) => string) => {
    const [value, interval] = estimateCells(e, show);
    return e === null ? value! : `${value} (${interval})`;
  };
  return table(
    ['model', 'sampled', 'reviewed', 'precision', 'recall', 'accuracy', 'cats'],
    models.map((m) => [
      `${m.model.name}@${m.model.version}`,
      String(m.sampled),
      String(m.reviewed),
      cell(m.precision, share),
      cell(m.recall, share),
      cell(m.accuracy, share),
      cell(m.cats, (v) => String(Math.round(v))),
    ]),
  );
}
