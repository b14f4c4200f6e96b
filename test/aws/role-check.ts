// Every recorded AWS call checked against the calling function's role as the compiled template states it, by a real
// IAM policy evaluator (@cloud-copilot/iam-simulate): the role's inline policies with every intrinsic evaluated, and
// the resource's own policy where it has one (the bucket's, the upload events queue's), in the deployed account.
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { resolve, type StackContext, type TemplateWithConditions } from './intrinsics';

export interface Authorization {
  action: string;
  resource: string;
  /** The request's own condition keys (s3:prefix of a listing). */
  context?: Record<string, string>;
}

export interface Verdict {
  allowed: boolean;
  /** Allowed, ImplicitlyDenied, ExplicitlyDenied, or the evaluator's error. */
  result: string;
}

interface RoleProperties {
  Policies?: { PolicyName: string; PolicyDocument: unknown }[];
}

export interface RoleBook {
  /** The inline policies of the function's role (by function name as osls names it: ingest, api, …). */
  policies(functionName: string): { name: string; policy: unknown }[];
  /** The resource policy (bucket policy, queue policy) governing `resource`, if any. */
  resourcePolicy(resource: string): unknown;
  roleArn(functionName: string): string;
}

const lambdaOf = (fn: string): string => `${fn.charAt(0).toUpperCase()}${fn.slice(1)}LambdaFunction`;

/** Reads the roles and resource policies from the template. */
export function roleBook(template: TemplateWithConditions, ctx: StackContext): RoleBook {
  const roleLogicalId = (fn: string): string => {
    const role = template.Resources[lambdaOf(fn)]?.Properties.Role as { 'Fn::GetAtt': [string, string] } | undefined;
    if (!role) throw new Error(`no function ${fn} in the template`);
    return role['Fn::GetAtt'][0];
  };
  const resourcePolicies: { resources: string[]; policy: unknown }[] = [];
  for (const r of Object.values(template.Resources)) {
    if (r.Type === 'AWS::S3::BucketPolicy') {
      const bucket = resolve(template, ctx, r.Properties.Bucket) as string;
      resourcePolicies.push({ resources: [`arn:aws:s3:::${bucket}`], policy: resolve(template, ctx, r.Properties.PolicyDocument) });
    }
    if (r.Type === 'AWS::SQS::QueuePolicy') {
      const urls = resolve(template, ctx, r.Properties.Queues) as string[];
      const arns = urls.map((u) => `arn:aws:sqs:${ctx.region}:${ctx.accountId}:${u.split('/').pop() as string}`);
      resourcePolicies.push({ resources: arns, policy: resolve(template, ctx, r.Properties.PolicyDocument) });
    }
  }
  return {
    policies: (fn) => {
      const props = template.Resources[roleLogicalId(fn)]?.Properties as RoleProperties;
      return (props.Policies ?? []).map((p) => ({ name: p.PolicyName, policy: resolve(template, ctx, p.PolicyDocument) }));
    },
    resourcePolicy: (resource) =>
      resourcePolicies.find((p) => p.resources.some((r) => resource === r || resource.startsWith(`${r}/`)))?.policy,
    roleArn: (fn) => `arn:aws:iam::${ctx.accountId}:role/${ctx.physical[roleLogicalId(fn)] as string}`,
  };
}

/** Whether the function's role allows the call; HTTPS as every SDK call to AWS is (the test's hop to moto is loopback). */
export async function authorize(book: RoleBook, accountId: string, functionName: string, call: Authorization): Promise<Verdict> {
  const resourcePolicy = book.resourcePolicy(call.resource);
  const result = await runSimulation(
    {
      request: {
        principal: book.roleArn(functionName),
        action: call.action,
        resource: { resource: call.resource, accountId },
        contextVariables: { 'aws:SecureTransport': 'true', ...call.context },
      },
      identityPolicies: book.policies(functionName),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
    },
    {},
  );
  if (result.resultType === 'error') return { allowed: false, result: `evaluator error: ${result.errors.message}` };
  return { allowed: result.overallResult === 'Allowed', result: result.overallResult };
}
