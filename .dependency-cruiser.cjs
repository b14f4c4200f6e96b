// The layers of docs/design.md ("Layers"), as rules: `npm run lint` (and so `npm test` and CI) fails on an import
// that points up a layer or closes a circle, naming the rule. From the bottom up:
//   domain    lib/domain/, lib/model-version.ts, lib/errors.ts, lib/config.ts, lib/ids.ts, lib/backoff.ts, lib/validation-messages.ts, lib/similar/
//   adapters  lib/store/, lib/aws/, lib/jobs/
//   services  lib/ingest/, lib/notify/, lib/auth/, lib/erase/, lib/export/, lib/reconcile/, lib/review/, lib/redetect/, lib/import/
//   api       lib/api/
//   edges     lib/http/, lib/web/, lib/cli/
//   run-time  functions/, then local/ (which runs them), bin/, web/ (the browser app)
//   tooling   scripts/ (build time), bench/, events/, test/: nothing that runs imports them
// and one boundary across them: only lib/store (and lib/aws) import the DynamoDB clients, as values or as types.
// Inside local/, its own files (config, contract, errors, listen, disk-space, periodic-sweep) are the floor of its rooms
// (s3/, queue/, bridge/, dynamodb/, iam/, gateway/, detector/), and stack/ (with ops/, the npm scripts' commands) is the top.
const DOMAIN = '^lib/(errors|config|ids|backoff|validation-messages|model-version)[.]ts$|^lib/(domain|similar)/';
const ADAPTERS = '^lib/(store|aws|jobs)/';
const SERVICES = '^lib/(ingest|notify|auth|erase|export|reconcile|review|redetect|import)/';
const API = '^lib/api/';
const EDGES = '^lib/(http|web|cli)/';
const RUN_TIME = '^(functions|local|bin|web)/';
const TOOLING = '^(scripts|bench|events|test)/';

const above = (...layers) => layers.join('|');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other, directly or round a loop: move what both need down a layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-nothing',
      severity: 'error',
      comment: 'lib/domain/ is the bottom: the types every room shares, by concept, importing nothing of the project but each other.',
      from: { path: '^lib/domain/' },
      to: { path: '^(lib|functions|local|bin|web|scripts|bench|events|test)/', pathNot: '^lib/domain/' },
    },
    {
      name: 'domain-not-up',
      severity: 'error',
      comment: 'The domain layer imports only the domain layer.',
      from: { path: DOMAIN },
      to: { path: above(ADAPTERS, SERVICES, API, EDGES, RUN_TIME, TOOLING) },
    },
    {
      name: 'adapters-not-up',
      severity: 'error',
      comment: 'The store and the AWS adapters speak the domain; they never import a service, the API or above.',
      from: { path: ADAPTERS },
      to: { path: above(SERVICES, API, EDGES, RUN_TIME, TOOLING) },
    },
    {
      name: 'services-not-up',
      severity: 'error',
      comment: 'ingest, notify, auth, erase, export and reconcile serve the API; they never import it or anything above.',
      from: { path: SERVICES },
      to: { path: above(API, EDGES, RUN_TIME, TOOLING) },
    },
    {
      name: 'api-not-up',
      severity: 'error',
      comment: 'The API layer is served by the HTTP app, the web site and the CLI, and never imports them.',
      from: { path: API },
      to: { path: above(EDGES, RUN_TIME, TOOLING) },
    },
    {
      name: 'lib-not-up',
      severity: 'error',
      comment: 'lib/ holds what functions/ and local/ run; it never imports them, nor build scripts, benches or tests.',
      from: { path: '^lib/' },
      to: { path: above(RUN_TIME, TOOLING) },
    },
    {
      name: 'functions-not-local',
      severity: 'error',
      comment: 'A Lambda function gets the local stand-ins through its deps, never by importing local/.',
      from: { path: '^functions/' },
      to: { path: above('^(local|bin|web)/', TOOLING) },
    },
    {
      name: 'dynamodb-through-the-store',
      severity: 'error',
      comment:
        'Only the store (and lib/aws, which builds the client) sees DynamoDB: everything else asks lib/store in domain ' +
        'terms, through the narrow interface it declares, and the wiring hands the store a TableRef ' +
        '(lib/store/table/access.ts). A type-only import counts: no service holds the client as its own. Locally the ' +
        'same: only local/dynamodb/, the stand-in itself, speaks DynamoDB; the stack and the operator tools build their ' +
        'document clients with lib/aws, as the functions do.',
      from: { path: '^(lib|functions|local)/', pathNot: '^(lib/(store|aws)|local/dynamodb)/' },
      to: { path: '(^|node_modules/)@aws-sdk/(client-dynamodb|lib-dynamodb)(/|$)' },
    },
    {
      name: 'local-floor-not-up',
      severity: 'error',
      comment: "local/'s own files are what its rooms share: they never import a room (local/s3/, local/stack/, …).",
      from: { path: '^local/[^/]+$' },
      to: { path: '^local/[^/]+/' },
    },
    {
      name: 'local-stack-on-top',
      severity: 'error',
      comment: 'local/stack/ composes the rooms and local/ops/ drives a running stack: no other room imports them.',
      from: { path: '^local/', pathNot: '^local/(stack|ops)/' },
      to: { path: '^local/(stack|ops)/' },
    },
    {
      name: 'run-time-not-tooling',
      severity: 'error',
      comment: 'What runs (the stack, the CLI, the web app) never imports build scripts, benches, sample events or tests.',
      from: { path: RUN_TIME },
      to: { path: TOOLING },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^([.]build|[.]serverless|[.]data|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.cjs', '.mjs', '.json'] },
  },
};
