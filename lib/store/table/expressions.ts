// Building DynamoDB Query expressions: key conditions, filters and their placeholders, and the plan of a Query without
// its page position. Each entity's listing builds its plan with it (batch/images.ts, client/images.ts) beside the
// function that runs it through table/query.ts.
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';

export interface TimeRange {
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, inclusive. */
  to?: number;
}

/**
 * A Query without its page position: the request builders' output. `scope` is what a cursor is bound to (index,
 * partition, key condition, filters; not the clock), `keyAttributes` what makes up a LastEvaluatedKey on that index.
 */
export interface QueryPlan {
  pattern: string;
  scope: string;
  keyAttributes: readonly string[];
  input: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>;
}

/** Collects a key condition, filters and their placeholders; attribute names always go through placeholders. */
export interface PlanOptions {
  pattern: string;
  tableName: string;
  index?: string;
  /** What makes up a LastEvaluatedKey on the index (or table). */
  keyAttributes: readonly string[];
  /** Epoch s: items whose ttl has passed are filtered out. */
  nowS: number;
  projection?: readonly string[];
  /** Descending sort key order. */
  newestFirst?: boolean;
}

export class ExpressionBuilder {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly key: string[] = [];
  private readonly filters: string[] = [];

  name(attribute: string): string {
    const placeholder = `#${attribute}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(placeholder: string, value: unknown): string {
    this.values[placeholder] = value;
    return placeholder;
  }

  /** `attribute op value` as a key condition, the name and the value through their placeholders: one call, not three. */
  keyIs(attribute: string, op: '=' | '<' | '<=' | '>' | '>=', placeholder: string, value: unknown): this {
    return this.keyCondition(`${this.name(attribute)} ${op} ${this.value(placeholder, value)}`);
  }

  keyCondition(expression: string): this {
    this.key.push(expression);
    return this;
  }

  filter(expression: string): this {
    this.filters.push(expression);
    return this;
  }

  /** A number range on `attribute` as a key condition or filter; nothing when the range is open on both ends. */
  range(attribute: string, range: TimeRange): string | undefined {
    if (range.from === undefined && range.to === undefined) return undefined;
    const a = this.name(attribute);
    if (range.from !== undefined && range.to !== undefined) {
      return `${a} BETWEEN ${this.value(':from', range.from)} AND ${this.value(':to', range.to)}`;
    }
    if (range.from !== undefined) return `${a} >= ${this.value(':from', range.from)}`;
    return `${a} <= ${this.value(':to', range.to)}`;
  }

  /** The plan; `nowS` (epoch s) becomes the ttl filter and stays out of the scope. */
  build(p: PlanOptions): QueryPlan {
    const scope = JSON.stringify([p.pattern, p.index ?? '', this.key, this.filters, this.values]);
    const filter = [...this.filters, `${this.name('ttl')} > :now`].join(' AND ');
    const projectionExpression = p.projection?.map((a) => this.name(a)).join(', ');
    const input: QueryPlan['input'] = {
      TableName: p.tableName,
      ...(p.index ? { IndexName: p.index } : {}),
      KeyConditionExpression: this.key.join(' AND '),
      FilterExpression: filter,
      ExpressionAttributeNames: { ...this.names },
      ExpressionAttributeValues: { ...this.values, ':now': p.nowS },
      ...(projectionExpression ? { ProjectionExpression: projectionExpression } : {}),
      ...(p.newestFirst ? { ScanIndexForward: false } : {}),
    };
    return { pattern: p.pattern, scope, keyAttributes: p.keyAttributes, input };
  }
}
