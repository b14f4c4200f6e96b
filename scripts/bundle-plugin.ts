// osls plugin: before osls packages, bundle every function with esbuild (scripts/bundle.ts) and point the
// function at its zip through package.artifact. `osls package`, `osls deploy` and `osls deploy function`
// all go through it, so no step can ship unbundled sources.
import path from 'node:path';
import { ARTIFACT_DIR, BundleError, bundleFunction, type LambdaArchitecture } from './bundle';

interface FunctionConfig {
  handler?: string;
  runtime?: string;
  architecture?: LambdaArchitecture;
  package?: { artifact?: string; [k: string]: unknown };
}

interface Serverless {
  serviceDir: string;
  service: {
    provider: { runtime?: string; architecture?: LambdaArchitecture };
    getAllFunctions(): string[];
    getFunction(name: string): FunctionConfig;
  };
}

interface PluginUtils {
  log: { notice(msg: string): void; info(msg: string): void };
}

/** nodejs22.x → node22: the syntax level esbuild may emit. */
export function nodeTargetFor(runtime: string): string {
  const match = /^nodejs(\d+)\.x$/.exec(runtime);
  if (!match) throw new BundleError(`runtime "${runtime}" is not a Node.js Lambda runtime`);
  return `node${match[1]}`;
}

export default class OslsBundlePlugin {
  readonly hooks: Record<string, () => Promise<void>>;

  constructor(
    private readonly serverless: Serverless,
    private readonly options: { function?: string },
    private readonly utils: PluginUtils,
  ) {
    this.hooks = {
      'before:package:createDeploymentArtifacts': () => this.bundle(this.serverless.service.getAllFunctions()),
      'before:deploy:function:packageFunction': () => this.bundle(this.options.function ? [this.options.function] : []),
    };
  }

  private async bundle(names: string[]): Promise<void> {
    const { service, serviceDir } = this.serverless;
    for (const name of names) {
      const fn = service.getFunction(name);
      if (!fn.handler) throw new BundleError(`function ${name} has no handler`);
      const architecture = fn.architecture ?? service.provider.architecture ?? 'x86_64';
      const runtime = fn.runtime ?? service.provider.runtime;
      if (!runtime) throw new BundleError(`function ${name}: set provider.runtime`);
      const result = await bundleFunction({
        name,
        handler: fn.handler,
        architecture,
        nodeTarget: nodeTargetFor(runtime),
        projectDir: serviceDir,
        outDir: path.join(serviceDir, ARTIFACT_DIR),
      });
      fn.package = { ...fn.package, artifact: path.relative(serviceDir, result.artifact) };
      const natives = result.nativePackages.length ? ` + ${result.nativePackages.join(', ')} for linux-${architecture}` : '';
      this.utils.log.notice(
        `bundled ${name}: ${(result.bundleBytes / 1024).toFixed(0)} KB of JavaScript${natives}, ` +
          `${(result.artifactBytes / 1024 / 1024).toFixed(1)} MB zipped`,
      );
    }
  }
}
