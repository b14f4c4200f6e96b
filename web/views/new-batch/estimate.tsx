import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../../api';
import { exactCopies, sha256Of, type UploadEstimate, uploadUpperBound } from '../../estimate';
import { plural } from '../../format';
import type { PickedFile } from '../../upload';
import { loadUsage } from '../../usage';
import { dollars } from '../common';

/**
 * The estimate of uploading the chosen files, worked out again whenever they change: exact copies found by hashing
 * the files of equal size, the price and the day's quota left from GET /v1/usage (once). Null before any file.
 */
export function useEstimate(api: Api, files: PickedFile[]): UploadEstimate | null {
  const [estimate, setEstimate] = useState<UploadEstimate | null>(null);
  const usage = useRef<ReturnType<typeof loadUsage> | null>(null);
  /** Each file is read and hashed once, however often the choice changes around it. */
  const digests = useRef(new WeakMap<File, Promise<string>>());
  const digestOf = (file: File): Promise<string> => {
    let digest = digests.current.get(file);
    if (!digest) digests.current.set(file, (digest = sha256Of(file)));
    return digest;
  };
  useEffect(() => {
    if (files.length === 0) {
      setEstimate(null);
      return;
    }
    let live = true;
    usage.current ??= loadUsage(api).catch(() => null);
    void (async () => {
      const [copies, known] = await Promise.all([
        exactCopies(
          files.map((f) => f.file),
          digestOf,
        ).catch(() => 0),
        usage.current,
      ]);
      if (live) setEstimate(uploadUpperBound(files.length, copies, known?.pricePerImageUsd, known?.images.remaining));
    })();
    return () => {
      live = false;
    };
  }, [api, files]);
  return estimate;
}

/** Before the upload: the most it can cost, what is not charged, and whether today's quota takes it all. */
export function EstimateNote({ estimate: e }: { estimate: UploadEstimate }) {
  return (
    <div class="estimate" data-estimate="">
      <p>
        <strong>Before you upload:</strong> at most {plural(e.atMostCalls, 'DetectLabels call')}
        {e.atMostUsd !== undefined && <>, about {dollars(e.atMostUsd)}</>}
        {e.copies > 0 && <> ({plural(e.copies, 'exact copy', 'exact copies')} among the files, not charged)</>}. Images you have uploaded
        before cost nothing again; <code>icecat upload --dry-run</code> counts them exactly.
      </p>
      {e.remainingToday !== undefined && e.remainingToday < e.files && (
        <p class="estimate-quota">
          {e.remainingToday === 0
            ? `Today's quota is used up: ${e.files === 1 ? 'this upload' : `these ${e.files} uploads`} will fail as QuotaExceeded until 00:00 UTC.`
            : `Today's quota takes ${plural(e.remainingToday, 'more upload')}: the other ${e.files - e.remainingToday} will fail as QuotaExceeded until 00:00 UTC.`}
        </p>
      )}
    </div>
  );
}
