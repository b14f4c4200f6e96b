// What an upload would cost, told before it starts. The ingest charges a DetectLabels call per distinct image it has
// not classified for the client before (docs/design.md §8); its fingerprint is a hash of the pixels sharp decodes, which
// a browser cannot reproduce (its decoders and colour handling differ). So the page gives an upper bound it can stand
// behind: every chosen file, less the exact copies among them (equal bytes are equal pixels, a duplicate, never
// charged), and says that images the service already knows cost nothing either (`icecat upload --dry-run` counts them).

/** Files at or above this size are not read to compare: a copy among them only makes the bound looser. */
const HASH_MAX_BYTES = 64 * 1024 * 1024;

interface SizedFile {
  size: number;
}

/**
 * How many of the files are exact copies of an earlier one: files of the same size (only those can be equal) hashed
 * with `digestOf`, each file after the first of a digest counted. Files of a size met once are never read.
 */
export async function exactCopies<F extends SizedFile>(files: readonly F[], digestOf: (file: F) => Promise<string>): Promise<number> {
  const bySize = new Map<number, F[]>();
  for (const f of files) {
    if (f.size === 0 || f.size >= HASH_MAX_BYTES) continue;
    const same = bySize.get(f.size);
    if (same) same.push(f);
    else bySize.set(f.size, [f]);
  }
  let copies = 0;
  for (const same of bySize.values()) {
    if (same.length < 2) continue;
    const seen = new Set<string>();
    for (const f of same) {
      const digest = await digestOf(f);
      if (seen.has(digest)) copies++;
      else seen.add(digest);
    }
  }
  return copies;
}

/** SHA-256 of a file's bytes, hex. */
export async function sha256Of(file: Blob): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface UploadEstimate {
  files: number;
  /** Exact copies among them: duplicates, never a DetectLabels call. */
  copies: number;
  /** The most DetectLabels calls the upload can make. */
  atMostCalls: number;
  /** At the service's price; undefined when the service does not say one. */
  atMostUsd?: number;
  /** Uploads the client's daily quota still takes; undefined when not known. */
  remainingToday?: number;
}

/** The most the upload can cost: every file less the exact copies among them, the price and quota when known. */
export function uploadUpperBound(files: number, copies: number, pricePerImageUsd?: number, remainingToday?: number): UploadEstimate {
  const atMostCalls = Math.max(files - copies, 0);
  return {
    files,
    copies,
    atMostCalls,
    ...(pricePerImageUsd !== undefined ? { atMostUsd: Math.round(atMostCalls * pricePerImageUsd * 1e9) / 1e9 } : {}),
    ...(remainingToday !== undefined ? { remainingToday } : {}),
  };
}
