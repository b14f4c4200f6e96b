// Each function's role as a CloudFormation template states it: the statements of its inline policies with their
// intrinsics (Fn::Sub, Fn::GetAtt, Ref) resolved to the ARNs AWS forms for the template's resources. Pure: it reads a
// template object (the osls-compiled one, or local/iam/template.ts's reading of serverless.yml and resources/), and
// nothing else, so the local stand-ins and a test against another AWS implementation read the same statements.
import { LocalStackError } from '../errors';

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
  /** The template's parameters (a Ref to one answers its value: DeployedPlace.parameters, else its Default). */
  Parameters?: Record<string, { Type?: string; Default?: unknown }>;
  /** Conditions a statement's Fn::If names (Fn::Not, Fn::Equals, Fn::Join over parameters). */
  Conditions?: Record<string, unknown>;
}

/** Where the stack is (or stands in for) deployed, and the physical names its resources have there. */
export interface DeployedPlace {
  partition?: string;
  region: string;
  accountId: string;
  /** Physical names by logical id; a resource not named here has the name its template properties give it. */
  names?: Record<string, string>;
  /** Values of the template's parameters, by name (a CommaDelimitedList as its comma-separated string). */
  parameters?: Record<string, string>;
}

/** A function's role: its logical id and its statements (managed policies, X-Ray's, are not evaluated locally). */
export interface FunctionRole {
  roleLogicalId: string;
  statements: PolicyStatement[];
}

export class RoleTemplateError extends LocalStackError {
  override name = 'RoleTemplateError';
  readonly code = 'invalid_role_template';
}

/** Each resource type's name property and the ARN AWS forms from it (GetAtt X.Arn); Ref answers the name. */
const ARN_OF: Record<
  string,
  { nameProperty: string; arn: (p: Required<Omit<DeployedPlace, 'names' | 'parameters'>>, name: string) => string }
> = {
  'AWS::DynamoDB::Table': { nameProperty: 'TableName', arn: (p, n) => `arn:${p.partition}:dynamodb:${p.region}:${p.accountId}:table/${n}` },
  'AWS::S3::Bucket': { nameProperty: 'BucketName', arn: (p, n) => `arn:${p.partition}:s3:::${n}` },
  'AWS::SQS::Queue': { nameProperty: 'QueueName', arn: (p, n) => `arn:${p.partition}:sqs:${p.region}:${p.accountId}:${n}` },
  'AWS::Lambda::Function': {
    nameProperty: 'FunctionName',
    arn: (p, n) => `arn:${p.partition}:lambda:${p.region}:${p.accountId}:function:${n}`,
  },
  // Roles carry no RoleName: CloudFormation names them <stack>-<logical id>-<suffix>; unnamed, the logical id stands in.
  'AWS::IAM::Role': { nameProperty: 'RoleName', arn: (p, n) => `arn:${p.partition}:iam::${p.accountId}:role/${n}` },
};

class Resolver {
  private readonly place: Required<Omit<DeployedPlace, 'names' | 'parameters'>>;

  constructor(
    private readonly template: RoleTemplate,
    private readonly where: DeployedPlace,
  ) {
    this.place = { partition: where.partition ?? 'aws', region: where.region, accountId: where.accountId };
  }

  /** A parameter's value: a string, or a list for a CommaDelimitedList ('' is no item). */
  private parameter(name: string): string | string[] | undefined {
    const p = this.template.Parameters?.[name];
    if (!p) return undefined;
    const raw = this.where.parameters?.[name] ?? (typeof p.Default === 'string' ? p.Default : '');
    if (p.Type !== 'CommaDelimitedList') return raw;
    return raw === '' ? [] : raw.split(',').map((x) => x.trim());
  }

  /** A value that may be a list (Fn::Split, a CommaDelimitedList parameter), as a list. */
  resolveList(value: unknown): string[] {
    const v = (value ?? {}) as Record<string, unknown>;
    const split = v['Fn::Split'];
    if (Array.isArray(split)) return this.resolve(split[1]).split(split[0] as string);
    if (typeof v.Ref === 'string') {
      const param = this.parameter(v.Ref);
      if (Array.isArray(param)) return param;
    }
    if (Array.isArray(value)) return value.flatMap((x) => this.resolveList(x));
    return [this.resolve(value)];
  }

  /** A condition of the template (or an inline one): Fn::Not, Fn::Equals, Fn::And, Fn::Or, Condition. */
  holds(condition: unknown): boolean {
    const c = (condition ?? {}) as Record<string, unknown[] | string>;
    if (typeof c.Condition === 'string') return this.holds(this.template.Conditions?.[c.Condition]);
    if (Array.isArray(c['Fn::Not'])) return !this.holds(c['Fn::Not'][0]);
    if (Array.isArray(c['Fn::And'])) return c['Fn::And'].every((x) => this.holds(x));
    if (Array.isArray(c['Fn::Or'])) return c['Fn::Or'].some((x) => this.holds(x));
    if (Array.isArray(c['Fn::Equals'])) return this.resolve(c['Fn::Equals'][0]) === this.resolve(c['Fn::Equals'][1]);
    throw new RoleTemplateError(`cannot evaluate the condition ${JSON.stringify(condition)}`);
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
    const property = resource.Properties?.[kind.nameProperty];
    if (property === undefined && resource.Type === 'AWS::IAM::Role') return logicalId;
    return this.resolve(property);
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
    if (typeof v.Ref === 'string') {
      const param = this.parameter(v.Ref);
      if (param !== undefined) return Array.isArray(param) ? param.join(',') : param;
      return this.pseudo(v.Ref) ?? this.nameOf(v.Ref);
    }
    const join = v['Fn::Join'];
    if (Array.isArray(join)) return this.resolveList(join[1]).join(join[0] as string);
    const sub = v['Fn::Sub'];
    if (Array.isArray(sub)) {
      const vars = Object.fromEntries(Object.entries((sub[1] ?? {}) as Record<string, unknown>).map(([k, x]) => [k, this.resolve(x)]));
      return (sub[0] as string).replace(/\$\{([A-Za-z0-9:.]+)\}/g, (_, n: string) => vars[n] ?? this.variable(n));
    }
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
  if (s.Resource !== undefined) out.Resource = asList(s.Resource).flatMap((r) => resolver.resolveList(r));
  if (s.NotResource !== undefined) out.NotResource = asList(s.NotResource).flatMap((r) => resolver.resolveList(r));
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

/** A statement as deployed: under Fn::If [condition, then, else], the branch the condition picks (AWS::NoValue: none). */
function chosen(resolver: Resolver, s: Record<string, unknown>): Record<string, unknown>[] {
  const branches = s['Fn::If'];
  if (!Array.isArray(branches)) return [s];
  const pick = (resolver.holds({ Condition: branches[0] }) ? branches[1] : branches[2]) as Record<string, unknown>;
  return pick.Ref === 'AWS::NoValue' ? [] : chosen(resolver, pick);
}

/** The resolved statements of one AWS::IAM::Role's inline policies. */
export function roleStatements(template: RoleTemplate, roleLogicalId: string, where: DeployedPlace): PolicyStatement[] {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new RoleTemplateError(`${roleLogicalId} is not an AWS::IAM::Role`);
  const resolver = new Resolver(template, where);
  const policies = (role.Properties?.Policies ?? []) as { PolicyDocument: { Statement: Record<string, unknown>[] } }[];
  return policies.flatMap((p) => p.PolicyDocument.Statement.flatMap((s) => chosen(resolver, s)).map((s) => resolveStatement(resolver, s)));
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
