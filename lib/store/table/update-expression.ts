// Building a write's expressions: the UpdateExpression's SET / REMOVE / ADD / DELETE actions and the
// ConditionExpression (attribute_exists, comparisons, AND / OR / NOT) of an Update, a Put, a Delete or a
// ConditionCheck. Every attribute goes through a `#name` placeholder (reserved words such as ttl, status, count
// included), every value through a `:label` the caller names; the names and values sent are exactly those the
// expressions use (DynamoDB refuses one it does not find in them). Query plans are expressions.ts's.
//
// The parts are rendered when the request is built, not when they are made, so a condition or operand made and not
// used leaves nothing behind. Clauses come out in the order they were first used, actions in the order given.
import { IceCatError } from '../../errors';
import {
  BATCH_ATTRIBUTES,
  type BatchAttribute,
  COUNTER_ATTRIBUTES,
  IMAGE_ATTRIBUTES,
  type ImageAttribute,
  UPLOAD_ATTRIBUTES,
  type UploadAttribute,
} from './attributes';

/** A top-level attribute by its domain name, or a path into a map: ['import', 'state'] is `#import.#state`. */
export type Path<K extends string> = K | readonly [K, ...string[]];

/** Registers the names and values a part uses and answers its text. */
interface Scope<K extends string> {
  name(path: Path<K>): string;
  value(label: ValueLabel, value: unknown): string;
}

export type ValueLabel = `:${string}`;

/** A value in an expression: an attribute, a value, or a function of them (if_not_exists, +, list_append). */
export type Operand<K extends string> = (scope: Scope<K>) => string;

/** A condition; `kind` says how it is parenthesized inside another (an AND in an OR, an OR in an AND, either in a NOT). */
export interface Condition<K extends string> {
  readonly kind: 'AND' | 'OR' | 'simple';
  readonly render: (scope: Scope<K>) => string;
}

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** The expression parts of a request, ready to spread into its input. */
export interface WriteExpressions {
  UpdateExpression?: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** A write's expressions built wrong (a programming error, never the data's): nothing is sent. */
export class ExpressionError extends IceCatError {
  override name = 'ExpressionError';
  readonly code = 'expression_invalid';
}

type Clause = 'SET' | 'REMOVE' | 'ADD' | 'DELETE';

const isPath = <K extends string>(x: Path<K> | Operand<K>): x is Path<K> => typeof x !== 'function';

const sameValue = (a: unknown, b: unknown): boolean =>
  Object.is(a, b) || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/**
 * One write's expressions over one item's attributes. `attributes` maps each domain name to its stored name
 * (attributes.ts); `null` takes the names as stored.
 */
export class WriteExpression<K extends string> {
  private readonly clauses = new Map<Clause, Operand<K>[]>();
  private readonly conditions: Condition<K>[] = [];

  constructor(private readonly attributes: Readonly<Record<K, string>> | null) {}

  // ---- operands

  /** An attribute (or a path into a map) as an operand. */
  attr(path: Path<K>): Operand<K> {
    return (s) => s.name(path);
  }

  /** A value as an operand, through its `:label`; one label carries one value in a request. */
  val(label: ValueLabel, value: unknown): Operand<K> {
    return (s) => s.value(label, value);
  }

  /** `if_not_exists(path, fallback)`. */
  ifNotExists(path: Path<K>, fallback: Operand<K>): Operand<K> {
    return (s) => `if_not_exists(${s.name(path)}, ${fallback(s)})`;
  }

  /** `a + b`. */
  plus(a: Path<K> | Operand<K>, b: Path<K> | Operand<K>): Operand<K> {
    return (s) => `${this.operand(a)(s)} + ${this.operand(b)(s)}`;
  }

  /** `a - b`. */
  minus(a: Path<K> | Operand<K>, b: Path<K> | Operand<K>): Operand<K> {
    return (s) => `${this.operand(a)(s)} - ${this.operand(b)(s)}`;
  }

  /** `list_append(a, b)`. */
  listAppend(a: Path<K> | Operand<K>, b: Path<K> | Operand<K>): Operand<K> {
    return (s) => `list_append(${this.operand(a)(s)}, ${this.operand(b)(s)})`;
  }

  // ---- conditions

  exists(path: Path<K>): Condition<K> {
    return { kind: 'simple', render: (s) => `attribute_exists(${s.name(path)})` };
  }

  notExists(path: Path<K>): Condition<K> {
    return { kind: 'simple', render: (s) => `attribute_not_exists(${s.name(path)})` };
  }

  /** `contains(path, operand)`: a set holding a member, a string holding a substring. */
  contains(path: Path<K>, member: Operand<K>): Condition<K> {
    return { kind: 'simple', render: (s) => `contains(${s.name(path)}, ${member(s)})` };
  }

  beginsWith(path: Path<K>, prefix: Operand<K>): Condition<K> {
    return { kind: 'simple', render: (s) => `begins_with(${s.name(path)}, ${prefix(s)})` };
  }

  /** `left op right`, each an attribute (a path) or an operand. */
  compare(left: Path<K> | Operand<K>, op: Comparator, right: Path<K> | Operand<K>): Condition<K> {
    return { kind: 'simple', render: (s) => `${this.operand(left)(s)} ${op} ${this.operand(right)(s)}` };
  }

  /** `path op :label` with the value: the common comparison in one call. */
  is(path: Path<K>, op: Comparator, label: ValueLabel, value: unknown): Condition<K> {
    return this.compare(path, op, this.val(label, value));
  }

  and(...parts: Condition<K>[]): Condition<K> {
    return this.joined('AND', parts);
  }

  or(...parts: Condition<K>[]): Condition<K> {
    return this.joined('OR', parts);
  }

  not(part: Condition<K>): Condition<K> {
    return { kind: 'simple', render: (s) => `NOT ${wrap(part, 'simple', s)}` };
  }

  // ---- actions

  /** `SET path = :label` with the value, or `SET path = operand`. */
  set(path: Path<K>, to: Operand<K>): this;
  set(path: Path<K>, label: ValueLabel, value: unknown): this;
  set(path: Path<K>, to: Operand<K> | ValueLabel, value?: unknown): this {
    const operand = typeof to === 'function' ? to : this.val(to, value);
    return this.action('SET', (s) => `${s.name(path)} = ${operand(s)}`);
  }

  /** `SET path = if_not_exists(path, :label)`: written once, kept after. */
  setIfNotExists(path: Path<K>, label: ValueLabel, value: unknown): this {
    return this.set(path, this.ifNotExists(path, this.val(label, value)));
  }

  /** `SET path = path + :label`: the attribute must exist (ADD makes one that does not). */
  increment(path: Path<K>, label: ValueLabel, value: number): this {
    return this.set(path, this.plus(path, this.val(label, value)));
  }

  /** `SET path = list_append(path, :label)`. */
  append(path: Path<K>, label: ValueLabel, items: readonly unknown[]): this {
    return this.set(path, this.listAppend(path, this.val(label, items)));
  }

  /** `ADD path :label`: a number added (from 0 when absent), or members added to a set. */
  add(path: Path<K>, label: ValueLabel, value: unknown): this {
    return this.action('ADD', (s) => `${s.name(path)} ${s.value(label, value)}`);
  }

  /** `DELETE path :label`: members taken out of a set. */
  delete(path: Path<K>, label: ValueLabel, members: unknown): this {
    return this.action('DELETE', (s) => `${s.name(path)} ${s.value(label, members)}`);
  }

  remove(...paths: Path<K>[]): this {
    for (const path of paths) this.action('REMOVE', (s) => s.name(path));
    return this;
  }

  /** Conditions the write on every part given (ANDed with those given before). */
  when(...parts: Condition<K>[]): this {
    this.conditions.push(...parts);
    return this;
  }

  /** An Update's expressions: refused without an action. */
  update(): WriteExpressions & { UpdateExpression: string } {
    if (this.clauses.size === 0) throw new ExpressionError('An update expression needs at least one action');
    return this.render() as WriteExpressions & { UpdateExpression: string };
  }

  /** A Put's, a Delete's or a ConditionCheck's: only a condition, refused without one or with actions. */
  condition(): WriteExpressions & { ConditionExpression: string } {
    if (this.clauses.size > 0) throw new ExpressionError('A condition-only request takes no update actions');
    if (this.conditions.length === 0) throw new ExpressionError('A condition expression needs at least one condition');
    return this.render() as WriteExpressions & { ConditionExpression: string };
  }

  private operand(x: Path<K> | Operand<K>): Operand<K> {
    return isPath(x) ? this.attr(x) : x;
  }

  private joined(kind: 'AND' | 'OR', parts: Condition<K>[]): Condition<K> {
    if (parts.length === 0) throw new ExpressionError(`${kind} needs at least one condition`);
    if (parts.length === 1) return parts[0] as Condition<K>;
    return { kind, render: (s) => parts.map((p) => wrap(p, kind, s)).join(` ${kind} `) };
  }

  private action(clause: Clause, render: Operand<K>): this {
    const actions = this.clauses.get(clause) ?? [];
    actions.push(render);
    this.clauses.set(clause, actions);
    return this;
  }

  private render(): WriteExpressions {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const scope: Scope<K> = {
      name: (path) => (typeof path === 'string' ? [path] : path).map((part, i) => this.placeholder(names, part, i === 0)).join('.'),
      value: (label, value) => {
        if (!/^:\w+$/.test(label)) throw new ExpressionError(`Not a value placeholder: ${label}`);
        if (value === undefined) throw new ExpressionError(`No value for ${label}`);
        if (label in values && !sameValue(values[label], value)) throw new ExpressionError(`${label} given two values`);
        values[label] = value;
        return label;
      },
    };
    const update = [...this.clauses].map(([clause, actions]) => `${clause} ${actions.map((a) => a(scope)).join(', ')}`).join(' ');
    const condition = this.conditions.length ? this.and(...this.conditions).render(scope) : '';
    return {
      ...(update ? { UpdateExpression: update } : {}),
      ...(condition ? { ConditionExpression: condition } : {}),
      ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
      ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
    };
  }

  /** `#part` for a path's part: the first through the attribute table, the parts inside a map as they are stored. */
  private placeholder(names: Record<string, string>, part: string, top: boolean): string {
    const table = this.attributes as Record<string, string> | null;
    if (top && table && !Object.hasOwn(table, part)) throw new ExpressionError(`Unknown attribute: ${part}`);
    const stored = top && table ? (table[part] as string) : part;
    const base = `#${part.replace(/\W/g, '_')}`;
    let placeholder = base;
    for (let n = 2; placeholder in names && names[placeholder] !== stored; n++) placeholder = `${base}_${n}`;
    names[placeholder] = stored;
    return placeholder;
  }
}

function wrap<K extends string>(part: Condition<K>, inside: Condition<K>['kind'], scope: Scope<K>): string {
  const text = part.render(scope);
  return part.kind === 'simple' || part.kind === inside ? text : `(${text})`;
}

/** A write to an image record, its attributes by their domain names (`#fprint` → img_fprint). */
export const imageWrite = (): WriteExpression<ImageAttribute> => new WriteExpression(IMAGE_ATTRIBUTES);

/** A write to a batch summary: its attributes and its counters (`#total` → n_total). */
export const batchWrite = (): WriteExpression<BatchAttribute> => new WriteExpression({ ...BATCH_ATTRIBUTES, ...COUNTER_ATTRIBUTES });

/** A write to an upload's item (schema.ts uploadItemKey). */
export const uploadWrite = (): WriteExpression<UploadAttribute> => new WriteExpression(UPLOAD_ATTRIBUTES);

/** A write to an item whose attributes are named as stored (the client's items, the import's own). */
export const storedWrite = (): WriteExpression<string> => new WriteExpression<string>(null);
