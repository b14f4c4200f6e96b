// What this API can do, read once from its own description (GET /v1/openapi.json, no key needed): the page offers
// only what the API serves (listing batches, closing them, exports, near-duplicates, batch names) and so never
// sends a request bound to fail.

export interface Capabilities {
  /** Whether the API serves `method` on this concrete path. */
  serves(method: string, path: string): boolean;
  /** Whether the API's route for `method` on this path takes the query parameter. */
  takes(method: string, path: string, parameter: string): boolean;
  /** Whether POST /v1/batches takes the client's own batch name. */
  namesBatches: boolean;
}

interface OpenApi {
  paths?: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
}

const pattern = (template: string) => new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}/]+\}/g, '[^/]+')}$`);

export function capabilitiesOf(doc: OpenApi): Capabilities {
  const routes = Object.entries(doc.paths ?? {}).flatMap(([template, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      pattern: pattern(template),
      query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    })),
  );
  // A literal segment beats a variable one (…/images:batchGet before …/{fprint}), as API Gateway matches.
  const route = (method: string, path: string) =>
    routes.filter((r) => r.method === method && r.pattern.test(path)).sort((a, b) => b.pattern.source.length - a.pattern.source.length)[0];
  return {
    serves: (method, path) => route(method, path) !== undefined,
    takes: (method, path, parameter) => route(method, path)?.query.includes(parameter) ?? false,
    namesBatches: 'batchId' in (doc.components?.schemas?.CreateBatchRequest?.properties ?? {}),
  };
}

/** When the description cannot be read, everything is assumed served: the page then falls back on each 404. */
const EVERYTHING: Capabilities = { serves: () => true, takes: () => true, namesBatches: true };

let loaded: Promise<Capabilities> | undefined;

export function capabilities(): Promise<Capabilities> {
  loaded ??= fetch('/v1/openapi.json')
    .then((res) => (res.ok ? (res.json() as Promise<OpenApi>) : Promise.reject(new Error(String(res.status)))))
    .then(capabilitiesOf, () => EVERYTHING);
  return loaded;
}
