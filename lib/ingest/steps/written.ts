/**
 * The objects a run writes beside its source before the record (the thumbnail of its claim, the copy where it rests):
 * deleted again when its batch turns out to be erased meanwhile, as they may have landed behind the erasure's pass.
 * Like the debug log, a ledger the steps add to, not a field of a step's value.
 */
export class Written {
  private thumbnailKey: string | undefined;
  private restedKey: string | undefined;

  thumbnail(key: string): void {
    this.thumbnailKey = key;
  }

  rested(key: string | undefined): void {
    this.restedKey = key;
  }

  /** Where this run copied the upload before recording it, if it did. */
  get restedAt(): string | undefined {
    return this.restedKey;
  }

  /** The keys to delete when the batch is erased meanwhile: the thumbnail first, then the copy. */
  keys(): string[] {
    return [this.thumbnailKey, this.restedKey].filter((key): key is string => key !== undefined);
  }
}
