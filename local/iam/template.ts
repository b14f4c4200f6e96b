// The part of the compiled template the roles need, read straight from serverless.yml and resources/*.yml in a few
// milliseconds (`osls package` takes a minute): the functions with their roles, the roles, and the table, bucket and
// queues their statements name. CloudFormation's short tags become the intrinsics osls writes (`!Sub x` →
// {"Fn::Sub": "x"}), and osls's own variables (${self:service}, ${sls:stage}, ${self:custom.…}) are substituted as
// osls does. test/deploy/template.test.ts checks that the roles read so equal the compiled template's, role by role.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, type Tags } from 'yaml';
import type { RoleTemplate, TemplateResource } from './roles';

/** The files whose resources the roles name (the monitoring and throttling files name none of them). */
const ROLES_FILE = 'resources/roles.yml';
const RESOURCE_FILES = ['resources/table.yml', 'resources/storage.yml', 'resources/jobs.yml', ROLES_FILE, 'resources/imports.yml'];

const INTRINSICS: Record<string, string> = {
  Sub: 'Fn::Sub',
  Join: 'Fn::Join',
  Select: 'Fn::Select',
  Split: 'Fn::Split',
  If: 'Fn::If',
  Equals: 'Fn::Equals',
  Not: 'Fn::Not',
  And: 'Fn::And',
  Or: 'Fn::Or',
  FindInMap: 'Fn::FindInMap',
  ImportValue: 'Fn::ImportValue',
  GetAZs: 'Fn::GetAZs',
  Base64: 'Fn::Base64',
};

const CFN_TAGS: Tags = [
  { tag: '!Ref', resolve: (v: string) => ({ Ref: v }) },
  { tag: '!GetAtt', resolve: (v: string) => ({ 'Fn::GetAtt': v.split('.') }) },
  ...Object.entries(INTRINSICS).flatMap(([short, fn]) => [
    { tag: `!${short}`, resolve: (v: string) => ({ [fn]: v }) },
    { tag: `!${short}`, collection: 'seq' as const, resolve: (v: { toJSON(): unknown }) => ({ [fn]: v.toJSON() }) },
  ]),
];

const parseCfn = (text: string): unknown => parse(text, { customTags: CFN_TAGS, logLevel: 'silent' });

type Settings = { service: string; custom: Record<string, unknown> };

/** osls's variables in `text`: ${self:service}, ${sls:stage}, ${self:custom.a.b}; others (CloudFormation's) stay. */
function substitute(text: string, settings: Settings, stage: string, depth = 0): string {
  if (depth > 5) return text;
  // A deploy parameter (`--param="name=value"`) is read as its default: the template's own parameter carries it.
  const withParams = text.replace(/\$\{param:[A-Za-z0-9_]+, *(['"])(.*?)\1\}/g, (_, _q: string, fallback: string) => fallback);
  return withParams.replace(/\$\{(sls:stage|self:[A-Za-z0-9_.]+)\}/g, (whole, name: string) => {
    if (name === 'sls:stage') return stage;
    if (name === 'self:service') return settings.service;
    const found = name
      .slice('self:'.length)
      .split('.')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], settings);
    return typeof found === 'string' || typeof found === 'number' ? substitute(String(found), settings, stage, depth + 1) : whole;
  });
}

const lambdaLogicalId = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}LambdaFunction`;

/**
 * The template the roles are read from, for `stage` (the local stack names its own resources: DeployedPlace.names);
 * `rolesFile` in place of resources/roles.yml (a test's roles with a statement taken out).
 */
export function roleTemplateFromSources(root: string, stage = 'dev', rolesFile?: string): RoleTemplate {
  const serverless = parseCfn(readFileSync(path.join(root, 'serverless.yml'), 'utf8')) as Settings & {
    functions: Record<string, { role?: string }>;
  };
  const resources: Record<string, TemplateResource> = {};
  const parameters: NonNullable<RoleTemplate['Parameters']> = {};
  const conditions: NonNullable<RoleTemplate['Conditions']> = {};
  for (const file of RESOURCE_FILES) {
    const source = file === ROLES_FILE && rolesFile ? rolesFile : path.join(root, file);
    const text = substitute(readFileSync(source, 'utf8'), serverless, stage);
    const part = parseCfn(text) as Required<RoleTemplate>;
    Object.assign(resources, part.Resources);
    Object.assign(parameters, part.Parameters ?? {});
    Object.assign(conditions, part.Conditions ?? {});
  }
  for (const [name, fn] of Object.entries(serverless.functions)) {
    resources[lambdaLogicalId(name)] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        FunctionName: `${serverless.service}-${stage}-${name}`,
        ...(fn.role ? { Role: { 'Fn::GetAtt': [fn.role, 'Arn'] } } : {}),
      },
    };
  }
  return { Resources: resources, Parameters: parameters, Conditions: conditions };
}
