// The detector's answers kept by image (off by default; the test stacks turn it on, test/stack-server.ts): the same bytes on
// the same model always get the same objects, so an image the stack has already run through its model is answered
// from memory instead of by a worker. Every call still goes through the endpoint (counted, faults injected, the image
// read and checked); only the inference is skipped. Least recently used entries go first.
import { createHash } from 'node:crypto';
import type { FoundObject } from './labels';

export class DetectionMemo {
  private readonly entries = new Map<string, readonly FoundObject[]>();
  hits = 0;

  constructor(private readonly capacity: number) {}

  static key(image: Uint8Array, version: string): string {
    return `${version}:${createHash('sha256').update(image).digest('base64')}`;
  }

  get(key: string): readonly FoundObject[] | undefined {
    const found = this.entries.get(key);
    if (found === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, found);
    this.hits += 1;
    return found;
  }

  set(key: string, objects: readonly FoundObject[]): void {
    if (this.capacity <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, objects);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
