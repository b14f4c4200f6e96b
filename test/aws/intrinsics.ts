// CloudFormation's intrinsic functions over the compiled template, as CloudFormation evaluates them, for what the test
// makes itself (the resources moto's CloudFormation skips, the properties it ignores, the roles' policies): Ref,
// Fn::GetAtt, Fn::Sub, Fn::Join, Fn::If, Fn::Equals, Fn::Not and the pseudo parameters; `{{resolve:…}}` stays as written.
import type { Template } from '../deploy/packaged';

export interface StackContext {
  region: string;
  accountId: string;
  parameters: Record<string, string>;
  /** Logical id → physical id (what Ref answers), for every resource that exists. */
  physical: Record<string, string>;
}

export class IntrinsicError extends Error {
  override name = 'IntrinsicError';
}

const PSEUDO = (ctx: StackContext): Record<string, string> => ({
  'AWS::AccountId': ctx.accountId,
  'AWS::Region': ctx.region,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'icecat-wrangler-dev',
});

/** An attribute as AWS forms it from the resource's physical id. */
function attribute(template: Template, ctx: StackContext, logicalId: string, attr: string): string {
  const resource = template.Resources[logicalId];
  const id = ctx.physical[logicalId];
  if (!resource || id === undefined) throw new IntrinsicError(`Fn::GetAtt ${logicalId}.${attr}: no such resource deployed`);
  const { region: r, accountId: a } = ctx;
  const last = id.split('/').pop() as string;
  const arns: Record<string, () => string> = {
    'AWS::IAM::Role': () => `arn:aws:iam::${a}:role/${id}`,
    'AWS::SQS::Queue': () => `arn:aws:sqs:${r}:${a}:${last}`,
    'AWS::Lambda::Function': () => `arn:aws:lambda:${r}:${a}:function:${id}`,
    'AWS::Events::Rule': () => (id.startsWith('arn:') ? id : `arn:aws:events:${r}:${a}:rule/${id}`),
    'AWS::Logs::LogGroup': () => `arn:aws:logs:${r}:${a}:log-group:${id}:*`,
    'AWS::S3::Bucket': () => `arn:aws:s3:::${id}`,
    'AWS::DynamoDB::Table': () => `arn:aws:dynamodb:${r}:${a}:table/${id}`,
  };
  if (attr === 'QueueName' && resource.Type === 'AWS::SQS::Queue') return last;
  const arn = arns[resource.Type];
  if (attr !== 'Arn' || !arn) throw new IntrinsicError(`Fn::GetAtt ${logicalId}.${attr} (${resource.Type}) is not known to the test`);
  return arn();
}

function ref(template: Template, ctx: StackContext, name: string): string | string[] {
  const pseudo = PSEUDO(ctx)[name];
  if (pseudo !== undefined) return pseudo;
  const declared = (template as TemplateWithConditions).Parameters?.[name];
  if (name in ctx.parameters || declared !== undefined) {
    const value = name in ctx.parameters ? (ctx.parameters[name] as string) : (declared?.Default ?? '');
    // A list parameter's Ref is the list.
    return declared?.Type === 'CommaDelimitedList' ? value.split(',') : value;
  }
  const id = ctx.physical[name];
  if (id === undefined) throw new IntrinsicError(`Ref ${name}: no such resource deployed`);
  return id;
}

/** `Ref AWS::NoValue`: the property or list element it stands in is left out. */
const NO_VALUE = Symbol('AWS::NoValue');

function sub(template: Template, ctx: StackContext, text: string, vars: Record<string, unknown> = {}): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    if (name in vars) return String(vars[name]);
    const dot = name.indexOf('.');
    return dot > 0 && !name.startsWith('AWS::')
      ? attribute(template, ctx, name.slice(0, dot), name.slice(dot + 1))
      : String(ref(template, ctx, name));
  });
}

export interface TemplateWithConditions extends Template {
  Conditions?: Record<string, unknown>;
  Parameters?: Record<string, { Default?: string; Type?: string }>;
}

export function conditionHolds(template: TemplateWithConditions, ctx: StackContext, name: string): boolean {
  const condition = template.Conditions?.[name];
  if (condition === undefined) throw new IntrinsicError(`no condition ${name}`);
  return Boolean(resolve(template, ctx, condition));
}

/** The value with every intrinsic function evaluated. */
export function resolve(template: TemplateWithConditions, ctx: StackContext, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(template, ctx, v)).filter((v) => v !== NO_VALUE);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1) {
    const [key, arg] = entries[0] as [string, unknown];
    const args = (): unknown[] => resolve(template, ctx, arg) as unknown[];
    switch (key) {
      case 'Ref':
        return arg === 'AWS::NoValue' ? NO_VALUE : ref(template, ctx, arg as string);
      case 'Fn::GetAtt':
        return attribute(template, ctx, (arg as string[])[0] as string, (arg as string[])[1] as string);
      case 'Fn::Sub':
        return typeof arg === 'string'
          ? sub(template, ctx, arg)
          : sub(template, ctx, (arg as unknown[])[0] as string, resolve(template, ctx, (arg as unknown[])[1]) as Record<string, unknown>);
      case 'Fn::Split': {
        const [sep, text] = args() as [string, string];
        return text.split(sep);
      }
      case 'Fn::Join': {
        const [sep, parts] = args() as [string, unknown[]];
        return parts.join(sep);
      }
      case 'Fn::Equals': {
        const [a, b] = args();
        return a === b;
      }
      case 'Fn::Not':
        return !(args()[0] as boolean);
      case 'Fn::If': {
        const [name, yes, no] = arg as [string, unknown, unknown];
        return resolve(template, ctx, conditionHolds(template, ctx, name) ? yes : no);
      }
      case 'Condition':
        return conditionHolds(template, ctx, arg as string);
      default:
        if (key.startsWith('Fn::')) throw new IntrinsicError(`${key} is not known to the test`);
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolve(template, ctx, v)]).filter(([, v]) => v !== NO_VALUE));
}
