// Pages handed down a pipeline of async generators (Query page → images → export records → text) with no reference
// left behind. A `for await` loop keeps the value it was last given, and a generator its locals, until the next value
// arrives; so each stage would hold its previous page while the next is read from DynamoDB, which is most of an
// export's allocation: the page outlives two young-generation collections and is promoted, garbage that V8 collects
// only once the old space reaches a limit it raises as the export goes on (docs/design.md, "Export memory").
// Here the source's page and the mapped page are dropped before the next is awaited.

interface PageEnds<U> {
  /** What comes before the first page, when it gives one. */
  first?: () => U | undefined;
  /** What comes after the last page (called once every page was mapped), when it gives one. */
  last?: () => U | undefined;
}

/**
 * `source`'s pages mapped one at a time (a page mapped to `undefined` is left out), between `ends`: nothing of a page
 * is kept while the next is awaited. Closing this early closes `source`.
 */
export async function* mapPages<T, U>(
  source: AsyncIterable<T>,
  map: (page: T) => U | undefined,
  ends: PageEnds<U> = {},
): AsyncGenerator<U> {
  const start = ends.first?.();
  if (start !== undefined) yield start;
  const pages = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      let step: IteratorResult<T> | undefined = await pages.next();
      if (step.done) break;
      let out: U | undefined = map(step.value);
      step = undefined;
      if (out !== undefined) yield out;
      out = undefined;
    }
    finished = true;
  } finally {
    if (!finished) await pages.return?.();
  }
  const end = ends.last?.();
  if (end !== undefined) yield end;
}
