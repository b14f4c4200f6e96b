// The model answering now, as this process knows it (docs/decisions/0031-model-versions.md): read from the table
// (current.ts), recorded when an answer comes from another (current-write.ts), and learnt by the reuse lookup.
import type { ModelVersion } from '../../domain/detection';
import { sameModel, UNKNOWN_MODEL } from '../../model-version';
import type { TableAccess } from '../table/access';
import { readCurrentModel } from './current';
import { recordCurrentModel } from './current-write';

export class AnsweringModel {
  /** The model this process last knew as the one answering now (read, recorded or learnt). */
  private known: ModelVersion | undefined;

  constructor(private readonly access: Pick<TableAccess, 'ddb' | 'table' | 'now'>) {}

  /** The model that would answer now, as last learnt from an answer; undefined before any. */
  async current(): Promise<ModelVersion | undefined> {
    this.known = await readCurrentModel({ ddb: this.access.ddb, tableName: this.access.table });
    return this.known;
  }

  /** What a read elsewhere (the reuse lookup) learnt of the model answering now. */
  learn(model: ModelVersion | undefined): void {
    this.known = model;
  }

  /**
   * Told the model of each new answer: records it as the one answering now when it is not the one this process last
   * knew (at its first answer, or when the model changed), so every process's next reuse sees the change.
   */
  async note(model: ModelVersion): Promise<void> {
    if (model.name === UNKNOWN_MODEL.name || sameModel(model, this.known)) return;
    await recordCurrentModel({ ddb: this.access.ddb, tableName: this.access.table }, model, this.access.now());
    this.known = model;
  }
}
