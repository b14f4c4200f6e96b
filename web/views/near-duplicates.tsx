import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Api, batchPath, type Image, type SimilarGroups } from '../api';
import { plural } from '../format';
import { nextSlice, THUMBNAILS_PER_CALL } from '../groups';
import { useNearViewport } from '../hooks';
import { href } from '../route';
import { ErrorNote, FileName, onGridKey } from './common';
import { Thumb } from './thumb';

type Group = SimilarGroups['groups'][number];

/**
 * A done batch's groups, per signed-in key (a new key is a new Api), so going back from an image to this view asks
 * nothing again. An unfinished batch's groups are never kept: they grow as images arrive.
 */
const finalGroups = new WeakMap<Api, Map<string, Group[]>>();

export const knownGroupCount = (api: Api, batchId: string): number | null => finalGroups.get(api)?.get(batchId)?.length ?? null;

function Member({ batchId, fprint, name, image }: { batchId: string; fprint: string; name: string; image?: Image }) {
  return (
    <li>
      <a class="near" href={href.image(batchId, fprint)} data-fprint={fprint}>
        {image ? (
          <Thumb image={image} />
        ) : (
          // The same square box the thumbnail will fill: nothing moves when it comes.
          <span class="thumb placeholder" aria-hidden="true">
            <span>{name.split('.').pop()?.slice(0, 4).toUpperCase()}</span>
          </span>
        )}
        <span class="card-name">
          <FileName name={name} />
        </span>
      </a>
    </li>
  );
}

/** The batch's groups (GET …/similar), a done batch's kept; `onGroups` is told how many, and whether that is final. */
function useSimilarGroups(api: Api, batchId: string, done: boolean, onGroups: (count: number, final: boolean) => void) {
  const [groups, setGroups] = useState<Group[] | null>(() => (done ? (finalGroups.get(api)?.get(batchId) ?? null) : null));
  const [error, setError] = useState<unknown>(null);
  const report = useRef(onGroups);
  report.current = onGroups;

  useEffect(() => {
    let live = true;
    const kept = done ? finalGroups.get(api)?.get(batchId) : undefined;
    if (kept) {
      setGroups(kept);
      report.current(kept.length, true);
      return undefined;
    }
    api.get<SimilarGroups>(`${batchPath(batchId)}/similar`).then(
      ({ groups: found }) => {
        if (!live) return;
        if (done) finalGroups.set(api, (finalGroups.get(api) ?? new Map<string, Group[]>()).set(batchId, found));
        setGroups(found);
        setError(null);
        report.current(found.length, done);
      },
      (err) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [api, batchId, done]);
  return { groups, error };
}

/** The view's heading: how many groups, once they are known. */
function nearTitle(groups: readonly unknown[] | null): string {
  if (groups === null) return 'Near-duplicates';
  return groups.length === 0 ? 'No near-duplicates' : `${plural(groups.length, 'group')} of near-duplicates`;
}

/** One group: its heading and a row of its members, named by file. */
function NearGroup({
  group: g,
  index: i,
  batchId,
  images,
}: {
  group: NonNullable<ReturnType<typeof useSimilarGroups>['groups']>[number];
  index: number;
  batchId: string;
  images: Map<string, Image>;
}) {
  return (
    <li class="near-group" aria-labelledby={`near-group-${i}`}>
      <h3 id={`near-group-${i}`} class="near-head">
        Group {i + 1} · {plural(g.fprints.length, 'image')} · max distance {g.maxDistance}
      </h3>
      <ul class="near-row" onKeyDown={onGridKey}>
        {g.fprints.map((f, j) => (
          <Member key={f} batchId={batchId} fprint={f} name={g.fileNames[j] ?? images.get(f)?.fileName ?? f} image={images.get(f)} />
        ))}
      </ul>
    </li>
  );
}

/**
 * The batch's near-duplicate groups (GET …/similar), asked for only when this view is chosen. The groups and their
 * file names come in that one answer and show at once; their thumbnails come by batchGet, group by group as the
 * reader scrolls, in the same square boxes as the grid's.
 */
export function NearDuplicates({
  api,
  batchId,
  done,
  onGroups,
}: {
  api: Api;
  batchId: string;
  done: boolean;
  onGroups: (count: number, final: boolean) => void;
}) {
  const { groups, error } = useSimilarGroups(api, batchId, done, onGroups);
  const [images, setImages] = useState<Map<string, Image>>(new Map());
  const [shown, setShown] = useState(0);
  const next = useRef(0);

  const showMore = useCallback(async () => {
    // The next slice starts where the last call's ended, even before that call's render.
    const from = next.current;
    if (!groups || from >= groups.length) return;
    const end = nextSlice(groups, from);
    next.current = end;
    setShown(end);
    const wanted = [...new Set(groups.slice(from, end).flatMap((g) => g.fprints))];
    try {
      for (let i = 0; i < wanted.length; i += THUMBNAILS_PER_CALL) {
        const got = await api.post<{ items: Image[] }>(`${batchPath(batchId)}/images:batchGet`, {
          fprints: wanted.slice(i, i + THUMBNAILS_PER_CALL),
        });
        setImages((old) => new Map([...old, ...got.items.map((image) => [image.fprint, image] as const)]));
      }
    } catch {
      // Without their thumbnails the groups still name their files: the placeholders stay.
    }
  }, [api, batchId, groups]);

  useEffect(() => {
    next.current = 0;
    void showMore();
  }, [showMore]);

  const more = groups !== null && shown < groups.length;
  const sentinel = useNearViewport(showMore, more, [shown, groups]);

  return (
    <section class="near-view" aria-labelledby="near-title" aria-busy={groups === null && !error}>
      <h2 id="near-title">{nearTitle(groups)}</h2>
      <p class="muted">
        Images that look alike without being the same pixels: re-encodes, resizes, small edits. Distance: how many of their 64-bit
        perceptual hashes' bits differ (0: they look the same).
      </p>
      {!done && <p class="muted">The batch is still processing: groups may grow until it is done.</p>}
      <ErrorNote error={error} />
      {groups === null && !error && (
        <p class="muted loading" aria-live="polite">
          Finding near-duplicates…
        </p>
      )}
      {groups !== null && groups.length > 0 && (
        <ol class="near-groups">
          {groups.slice(0, shown).map((g, i) => (
            <NearGroup key={g.fprints.join()} group={g} index={i} batchId={batchId} images={images} />
          ))}
        </ol>
      )}
      {more && (
        <p ref={sentinel as never} class="muted loading">
          Loading more groups…
        </p>
      )}
    </section>
  );
}
