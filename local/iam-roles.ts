// Each function's role as a CloudFormation template states it: the statements of its inline policies with their
// intrinsics (Fn::Sub, Fn::GetAtt, Ref) resolved to the ARNs AWS forms for the template's resources. Pure: it reads a
// template object (the osls-compiled one, or local/iam-template.ts's reading of serverless.yml and resources/), and
// nothing else, so the local stand-ins and a test against another AWS implementation read the same statements.

/** A policy statement with every intrinsic resolved. */
export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface RoleTemplate {
  Resources: Record<string, TemplateResource>;
}

/** Where the stack is (or stands in for) deployed, and the physical names its resources have there. */
export interface DeployedPlace {
  partition?: string;
  region: string;
  accountId: string;
  /** Physical names by logical id; a resource not named here has the name its template properties give it. */
  names?: Record<string, string>;
}

/** A function's role: its logical id and its statements (managed policies, X-Ray's, are not evaluated locally). */
export interface FunctionRole {
  roleLogicalId: string;
  statements: PolicyStatement[];
}

export class RoleTemplateError extends Error {
  override name = 'RoleTemplateError';
}

/** Each resource type's name property and the ARN AWS forms from it (GetAtt X.Arn); Ref answers the name. */
const ARN_OF: Record<string, { nameProperty: string; arn: (p: Required<Omit<DeployedPlace, 'names'>>, name: string) => string }> = {
  'AWS::DynamoDB::Table': { nameProperty: 'TableName', arn: (p, n) => `arn:${p.partition}:dynamodb:${p.region}:${p.accountId}:table/${n}` },
  'AWS::S3::Bucket': { nameProperty: 'BucketName', arn: (p, n) => `arn:${p.partition}:s3:::${n}` },
  'AWS::SQS::Queue': { nameProperty: 'QueueName', arn: (p, n) => `arn:${p.partition}:sqs:${p.region}:${p.accountId}:${n}` },
};

class Resolver {
  private readonly place: Required<Omit<DeployedPlace, 'names'>>;

  constructor(
    private readonly template: RoleTemplate,
    private readonly where: DeployedPlace,
  ) {
    this.place = { partition: where.partition ?? 'aws', region: where.region, accountId: where.accountId };
  }

  private pseudo(name: string): string | undefined {
    return { 'AWS::Partition': this.place.partition, 'AWS::Region': this.place.region, 'AWS::AccountId': this.place.accountId }[name];
  }

  nameOf(logicalId: string): string {
    const named = this.where.names?.[logicalId];
    if (named !== undefined) return named;
    const resource = this.template.Resources[logicalId];
    const kind = resource && ARN_OF[resource.Type];
    if (!resource || !kind) throw new RoleTemplateError(`cannot name ${logicalId} (${resource?.Type ?? 'no such resource'})`);
    return this.resolve(resource.Properties?.[kind.nameProperty]);
  }

  arnOf(logicalId: string): string {
    const resource = this.template.Resources[logicalId];
    const kind = resource && ARN_OF[resource.Type];
    if (!kind) throw new RoleTemplateError(`no ARN known for ${logicalId} (${resource?.Type ?? 'no such resource'})`);
    return kind.arn(this.place, this.nameOf(logicalId));
  }

  private variable(name: string): string {
    const pseudo = this.pseudo(name);
    if (pseudo !== undefined) return pseudo;
    const [id, attribute] = name.split('.');
    if (attribute === 'Arn') return this.arnOf(id as string);
    if (attribute === undefined) return this.nameOf(name);
    throw new RoleTemplateError(`cannot resolve \${${name}}`);
  }

  resolve(value: unknown): string {
    if (typeof value === 'string') return value;
    const v = (value ?? {}) as Record<string, unknown>;
    if (typeof v.Ref === 'string') return this.pseudo(v.Ref) ?? this.nameOf(v.Ref);
    const getAtt = v['Fn::GetAtt'];
    if (Array.isArray(getAtt) && getAtt[1] === 'Arn') return this.arnOf(getAtt[0] as string);
    if (typeof getAtt === 'string' && getAtt.endsWith('.Arn')) return this.arnOf(getAtt.slice(0, -4));
    if (typeof v['Fn::Sub'] === 'string')
      return (v['Fn::Sub'] as string).replace(/\$\{([A-Za-z0-9:.]+)\}/g, (_, n: string) => this.variable(n));
    throw new RoleTemplateError(`cannot resolve ${JSON.stringify(value)}`);
  }
}

const asList = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function resolveStatement(resolver: Resolver, s: Record<string, unknown>): PolicyStatement {
  const out: PolicyStatement = { Effect: s.Effect as 'Allow' | 'Deny' };
  if (s.Sid !== undefined) out.Sid = s.Sid as string;
  if (s.Action !== undefined) out.Action = asList(s.Action as string | string[]);
  if (s.NotAction !== undefined) out.NotAction = asList(s.NotAction as string | string[]);
  if (s.Resource !== undefined) out.Resource = asList(s.Resource).map((r) => resolver.resolve(r));
  if (s.NotResource !== undefined) out.NotResource = asList(s.NotResource).map((r) => resolver.resolve(r));
  if (s.Condition !== undefined) {
    const condition = s.Condition as Record<string, Record<string, unknown>>;
    out.Condition = Object.fromEntries(
      Object.entries(condition).map(([op, keys]) => [
        op,
        Object.fromEntries(
          Object.entries(keys).map(([k, vals]) => [k, Array.isArray(vals) ? vals.map((x) => resolver.resolve(x)) : resolver.resolve(vals)]),
        ),
      ]),
    );
  }
  return out;
}

/** The resolved statements of one AWS::IAM::Role's inline policies. */
export function roleStatements(template: RoleTemplate, roleLogicalId: string, where: DeployedPlace): PolicyStatement[] {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new RoleTemplateError(`${roleLogicalId} is not an AWS::IAM::Role`);
  const resolver = new Resolver(template, where);
  const policies = (role.Properties?.Policies ?? []) as { PolicyDocument: { Statement: Record<string, unknown>[] } }[];
  return policies.flatMap((p) => p.PolicyDocument.Statement.map((s) => resolveStatement(resolver, s)));
}

/** The role's logical id a function's `Role` property names (GetAtt X.Arn), or undefined. */
function roleIdOf(role: unknown): string | undefined {
  const getAtt = (role as Record<string, unknown> | undefined)?.['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return getAtt[0] as string;
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
}

/**
 * Every AWS::Lambda::Function's role, by the function's short name as serverless.yml names it (the logical id
 * `IngestLambdaFunction` → `ingest`).
 */
export function rolesFromTemplate(template: RoleTemplate, where: DeployedPlace): Record<string, FunctionRole> {
  const out: Record<string, FunctionRole> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function' || !logicalId.endsWith('LambdaFunction')) continue;
    const roleLogicalId = roleIdOf(resource.Properties?.Role);
    if (!roleLogicalId) throw new RoleTemplateError(`${logicalId} has no role of the template's own`);
    const base = logicalId.slice(0, -'LambdaFunction'.length);
    const name = base.charAt(0).toLowerCase() + base.slice(1);
    out[name] = { roleLogicalId, statements: roleStatements(template, roleLogicalId, where) };
  }
  return out;
}
