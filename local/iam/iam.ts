// IAM on the local stack. Each function signs as itself: its clients carry an access key of its own
// (functionCredentials), and every stand-in that a function's request reaches (S3, DynamoDB, the detector, the
// in-process queues) asks LocalIam whether that function's role, as the template states it (local/iam/roles.ts,
// read from serverless.yml and resources/ by local/iam/template.ts), allows the request; a refusal is each service's
// own AccessDenied. The operator's key (S3RVER) and the clients' own S3 keys are no function's: they keep their own
// scopes (everything; s3/scope.ts).

import { LOCAL_ACCOUNT_ID, LOCAL_NAMES } from '../contract';
import { type IamRequest, RoleDecisions } from './evaluate';
import { type FunctionRole, rolesFromTemplate } from './roles';
import { roleTemplateFromSources } from './template';

/** The stage the local stack stands in for: its queues' names (and LOCAL_QUEUE_ARN's) are the template's for it. */
export const LOCAL_STAGE = 'local';

const KEY_PREFIX = 'ASIAICECATLOCAL';

/**
 * A function's own local key. Not a secret: the operator's key, as public, can do everything; what matters is that a
 * request names the function it comes from, as a role's temporary key does on AWS.
 */
export const functionCredentials = (fn: string): { accessKeyId: string; secretAccessKey: string } => ({
  accessKeyId: `${KEY_PREFIX}${fn.toUpperCase()}`,
  secretAccessKey: `icecat-local-${fn}-role`,
});

/** The function whose key this is (any case as its key spells it), undefined for any other key. */
export function functionOfAccessKey(accessKeyId: string | undefined): string | undefined {
  if (!accessKeyId?.startsWith(KEY_PREFIX)) return undefined;
  return accessKeyId.slice(KEY_PREFIX.length).toLowerCase() || undefined;
}

export interface LocalIamOptions {
  root: string;
  table: string;
  bucket: string;
  /** The roles file read instead of resources/roles.yml (ICECAT_IAM_ROLES_FILE): a test's role with a statement taken out. */
  rolesFile?: string;
}

/** A refusal, worded as IAM words it in each service's AccessDenied message. */
export interface Refusal {
  fn: string;
  request: IamRequest;
  message: string;
}

export class LocalIam {
  private readonly decisions = new Map<string, RoleDecisions>();
  /** The roles as a deployment listing every bucket in ImportSourceBuckets states them: judges requests on other buckets. */
  private readonly sourceDecisions = new Map<string, RoleDecisions>();

  constructor(
    readonly roles: Record<string, FunctionRole>,
    private readonly names: { table: string; bucket: string },
    sourceRoles: Record<string, FunctionRole> = roles,
  ) {
    for (const [fn, role] of Object.entries(roles)) this.decisions.set(fn, new RoleDecisions(role.statements, LOCAL_ACCOUNT_ID));
    for (const [fn, role] of Object.entries(sourceRoles))
      this.sourceDecisions.set(fn, new RoleDecisions(role.statements, LOCAL_ACCOUNT_ID));
  }

  /**
   * A request on another bucket than the stack's is an import's read of a client's source (docs/design.md §16): every
   * other bucket of the local S3 may be a source, as if the deploy parameter listed it.
   */
  private decisionsFor(fn: string, request: IamRequest): RoleDecisions | undefined {
    const s3 = /^arn:aws:s3:::([^/]+)/.exec(request.resource);
    return s3 && s3[1] !== this.names.bucket ? this.sourceDecisions.get(fn) : this.decisions.get(fn);
  }

  get tableArn(): string {
    return `arn:aws:dynamodb:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:table/${this.names.table}`;
  }

  /** A table's ARN (or its index's) as DynamoDB names it in a request. */
  tableArnOf(table: string, index?: string): string {
    const arn = `arn:aws:dynamodb:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:table/${table}`;
    return index ? `${arn}/index/${index}` : arn;
  }

  /** A queue's ARN, by the template's name for it on the local stage (`uploads`, `erase`, `callbacks`...). */
  queueArn(name: string): string {
    return `arn:aws:sqs:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:icecat-wrangler-${LOCAL_STAGE}-${name}`;
  }

  /** The caller's role name as STS names an assumed role's session. */
  principalOf(fn: string): string {
    const role = this.roles[fn]?.roleLogicalId ?? 'UnknownRole';
    return `arn:aws:sts::${LOCAL_ACCOUNT_ID}:assumed-role/icecat-wrangler-${LOCAL_STAGE}-${role}/icecat-wrangler-${LOCAL_STAGE}-${fn}`;
  }

  /**
   * Evaluates one request of each service each role names, so that the evaluator has read each service's data (a few
   * hundred ms, once) before the first request that needs it.
   */
  async warm(): Promise<void> {
    const seen = new Set<string>();
    for (const [fn, role] of Object.entries(this.roles)) {
      for (const statement of role.statements) {
        const action = [statement.Action ?? []].flat()[0];
        const resource = [statement.Resource ?? []].flat()[0];
        const service = action?.split(':')[0];
        if (!action || !resource || !service || seen.has(service)) continue;
        seen.add(service);
        // An example ARN the service may not take (a log group for a log stream's action) still loads its data.
        await this.refusal(fn, [{ action, resource: resource.replace(/\*/g, 'x') }]).catch(() => undefined);
      }
    }
  }

  /**
   * The refusal of `request` by `fn`'s role, or undefined when it allows all of them. A function the template does not
   * have is refused everything.
   */
  async refusal(fn: string, requests: readonly IamRequest[]): Promise<Refusal | undefined> {
    for (const request of requests) {
      const decisions = this.decisionsFor(fn, request);
      if (decisions && (await decisions.allows(request))) continue;
      return {
        fn,
        request,
        message:
          `User: ${this.principalOf(fn)} is not authorized to perform: ${request.action}` +
          `${request.resource === '*' ? '' : ` on resource: ${request.resource}`} because no identity-based policy allows the ${request.action} action`,
      };
    }
    return undefined;
  }
}

/** The roles as the template states them, with the local stack's table, bucket and queue names. */
export function loadLocalIam(opts: LocalIamOptions): LocalIam {
  const template = roleTemplateFromSources(opts.root, LOCAL_STAGE, opts.rolesFile);
  const place = { region: LOCAL_NAMES.region, accountId: LOCAL_ACCOUNT_ID, names: { ImagesTable: opts.table, ImagesBucket: opts.bucket } };
  const roles = rolesFromTemplate(template, place);
  const sourceRoles = rolesFromTemplate(template, { ...place, parameters: { ImportSourceBuckets: '*' } });
  return new LocalIam(roles, { table: opts.table, bucket: opts.bucket }, sourceRoles);
}
