import { useState } from 'preact/hooks';
import type { Api, BatchSummary } from '../../api';
import { plural } from '../../format';
import { thresholdText } from '../../review';
import { reclassifyAll } from '../batch-actions';

interface RethresholdOptions {
  api: Api;
  batchId: string;
  /** The verdicts on their way. */
  chain: { current: Promise<void> };
  setBatch: (summary: BatchSummary) => void;
  readAgain: () => void;
  sync: () => Promise<void>;
}

/** The suggested threshold applied (POST …:reclassify), after the verdicts on their way; then the queue is read again. */
export function useRethreshold({ api, batchId, chain, setBatch, readAgain, sync }: RethresholdOptions) {
  const [rethreshold, setRethreshold] = useState<{ busy: boolean; outcome: string | null; error: unknown }>({
    busy: false,
    outcome: null,
    error: null,
  });

  const applyThreshold = async (threshold: number) => {
    setRethreshold({ busy: true, outcome: null, error: null });
    try {
      // After the verdicts on their way: the agreement read next counts them.
      await chain.current;
      const summary = await reclassifyAll(api, batchId, threshold);
      setBatch(summary);
      setRethreshold({
        busy: false,
        outcome: `Cat threshold ${thresholdText(threshold)}: ${plural(summary.counts.cats, 'cat')}.`,
        error: null,
      });
      // The button is gone (the threshold is the suggested one now): focus to the panel's heading, the outcome is read out.
      document.getElementById('agreement-title')?.focus();
      readAgain();
      void sync();
    } catch (error) {
      setRethreshold({ busy: false, outcome: null, error });
    }
  };

  return { rethreshold, applyThreshold };
}
