// How the near-duplicates view pages its groups' thumbnails.

/** Most keys of one batchGet: the thumbnails of the groups shown are asked for this many at a time. */
export const THUMBNAILS_PER_CALL = 100;

/**
 * Where the next slice of groups ends: whole groups from `from` up to one batchGet's most keys, at least one group
 * (a larger group's thumbnails then take several calls).
 */
export function nextSlice(groups: { fprints: string[] }[], from: number, keys = THUMBNAILS_PER_CALL): number {
  let end = from;
  let taken = 0;
  while (end < groups.length && (end === from || taken + groups[end]!.fprints.length <= keys)) taken += groups[end++]!.fprints.length;
  return end;
}
