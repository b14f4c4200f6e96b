import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Accuracy, Agreement, Api, BatchSummary } from '../../api';
import type { Capabilities } from '../../capabilities';

/**
 * The batch's counts and agreement, and the verdicts on their way: verdicts and undos go to the API one after the
 * other (`send`); once none is on its way, the counts and agreement (and, with `withAccuracy`, the audit's estimates)
 * are read again (`sync`).
 */
export function useReviewSync(api: Api, path: string, servesAgreement: boolean, caps: Capabilities | null, withAccuracy = false) {
  const [batch, setBatch] = useState<BatchSummary | null>(null);
  const [agreement, setAgreement] = useState<Agreement | null>(null);
  const [accuracy, setAccuracy] = useState<Accuracy | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [unsynced, setUnsynced] = useState(0);
  /** Verdicts sent and not yet in the counts read back: the progress says so (aria-busy). */
  const [saving, setSaving] = useState(false);
  const chain = useRef<Promise<void>>(Promise.resolve());
  const inFlight = useRef(0);
  const sent = useRef(0);

  const sync = useCallback(async () => {
    const at = sent.current;
    try {
      const [summary, agreed, estimated] = await Promise.all([
        api.get<BatchSummary>(path),
        servesAgreement ? api.get<Agreement>(`${path}/agreement`) : Promise.resolve(null),
        withAccuracy ? api.get<Accuracy>(`${path}/accuracy`) : Promise.resolve(null),
      ]);
      // Another verdict left meanwhile: these counts may miss it; its own sync follows.
      if (at !== sent.current) return;
      setBatch(summary);
      setAgreement(agreed);
      if (estimated) setAccuracy(estimated);
      setUnsynced(0);
      setSaving(false);
    } catch (error) {
      if (at === sent.current) setLoadError(error);
    }
  }, [api, path, servesAgreement, withAccuracy]);

  const send = (delta: number, op: () => Promise<void>) => {
    sent.current++;
    inFlight.current++;
    setUnsynced((u) => u + delta);
    setSaving(true);
    chain.current = chain.current.then(op).finally(() => {
      if (--inFlight.current === 0) void sync();
    });
  };

  // The summary and the agreement, once capabilities are known.
  useEffect(() => {
    if (!caps) return;
    void sync();
  }, [caps, sync]);

  return { batch, setBatch, agreement, accuracy, loadError, setLoadError, unsynced, saving, chain, sync, send };
}
