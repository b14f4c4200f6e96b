// Whether a role's statements allow one request, as IAM decides it: @cloud-copilot/iam-simulate, an evaluator of
// AWS's policy language that knows each service's actions, resource types and condition keys (an action name it does
// not know, or an ARN of the wrong type for the action, is an error, not a quiet deny). Pure but for RoleDecisions'
// cache: the local stand-ins ask RoleDecisions on every request; a test that checks recorded calls can ask roleAllows.
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { LocalStackError } from '../errors';
import type { PolicyStatement } from './roles';

export class PolicyEvaluationError extends LocalStackError {
  override name = 'PolicyEvaluationError';
  readonly code = 'policy_evaluation_failed';
}

/** One request as IAM sees it: the action, the resource's ARN ('*' for actions with none), and its condition keys. */
export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

const accountOf = (arn: string): string => /^arn:[^:]+:[^:]*:[^:]*:(\d{12}):/.exec(arn)?.[1] ?? '000000000000';

/** Whether identity statements `statements` (of a role in `accountId`) allow `request`: IAM's answer, uncached. */
export async function roleAllows(statements: readonly PolicyStatement[], request: IamRequest, accountId?: string): Promise<boolean> {
  const account = accountId ?? accountOf(request.resource);
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${account}:role/local-function-role`,
        action: request.action,
        resource: { resource: request.resource, accountId: account },
        contextVariables: request.context ?? {},
      },
      identityPolicies: [{ name: 'role', policy: { Version: '2012-10-17', Statement: statements } }],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') {
    throw new PolicyEvaluationError(`cannot evaluate ${request.action} on ${request.resource}: ${JSON.stringify(result.errors)}`);
  }
  if (result.resultType !== 'single') throw new PolicyEvaluationError(`${request.action} on ${request.resource}: not one resource`);
  return result.overallResult === 'Allowed';
}

/** IAM's wildcard match of one ARN pattern (`*` any run of characters, `?` one), case-sensitive as ARNs are. */
function patternMatcher(pattern: string): (arn: string) => boolean {
  if (pattern === '*') return () => true;
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  );
  return (arn) => re.test(arn);
}

const listOf = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * One role's decisions, cached. A decision depends on the resource only through which of the role's resource patterns
 * match it, and on the context only through the keys its conditions name, so the cache is keyed by those: every
 * upload's object under uploads/ is one entry, not one per key.
 */
export class RoleDecisions {
  private readonly matchers: ((arn: string) => boolean)[];
  private readonly conditionKeys: string[];
  private readonly cache = new Map<string, Promise<boolean>>();

  constructor(
    readonly statements: readonly PolicyStatement[],
    private readonly accountId: string,
  ) {
    const patterns = [...new Set(statements.flatMap((s) => [...listOf(s.Resource), ...listOf(s.NotResource)]))];
    this.matchers = patterns.map(patternMatcher);
    this.conditionKeys = [
      ...new Set(
        statements.flatMap((s) => Object.values(s.Condition ?? {}).flatMap((keys) => Object.keys(keys).map((k) => k.toLowerCase()))),
      ),
    ];
  }

  private keyOf(request: IamRequest): string {
    const service = /^arn:[^:]+:([^:]*):/.exec(request.resource)?.[1] ?? request.resource;
    const matched = this.matchers.map((m) => (m(request.resource) ? '1' : '0')).join('');
    const context = Object.entries(request.context ?? {})
      .filter(([k]) => this.conditionKeys.includes(k.toLowerCase()))
      .map(([k, v]) => `${k}=${listOf(v).join(',')}`)
      .join('&');
    return `${request.action}\n${service}\n${matched}\n${context}`;
  }

  /** IAM's answer to `request`, evaluated once per distinct (action, matched patterns, condition keys). */
  allows(request: IamRequest): Promise<boolean> {
    const key = this.keyOf(request);
    let decision = this.cache.get(key);
    if (!decision) {
      decision = roleAllows(this.statements, request, this.accountId);
      this.cache.set(key, decision);
      // A failed evaluation is not remembered: the next request asks again (and fails again, loudly).
      decision.catch(() => this.cache.delete(key));
    }
    return decision;
  }
}
