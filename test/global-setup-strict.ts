// Starts the strict project's stacks (jest.config.js): DynamoDB Local, which refuses what AWS refuses and dynalite
// accepts, and one stack per jest worker on it, as test/global-setup.ts starts the dynalite ones. Their environments
// go to the workers in ICECAT_TEST_STRICT_STACKS; test/stack-env-strict.ts applies the one of a file's worker.
// Under `npm run test:strict` DynamoDB Local is already running (ICECAT_DYNAMODB_ENDPOINT): it is used as it is.
import type { ChildProcess } from 'node:child_process';
import { type DynamoDBLocal, startDynamoDBLocal } from '../local/dynamodb/dynamodb-local';
import { startStackServers, stopStackServers } from './global-setup';

interface StrictStacks {
  stacks: ChildProcess[];
  /** Started here (not under `npm run test:strict`, which runs its own). */
  dynamodb?: DynamoDBLocal;
}

declare global {
  var __ICECAT_STRICT__: StrictStacks | undefined;
}

export default async function globalSetupStrict(globalConfig: { maxWorkers: number }): Promise<void> {
  if (globalThis.__ICECAT_STRICT__) return;
  const strict: StrictStacks = { stacks: [] };
  globalThis.__ICECAT_STRICT__ = strict;
  if (!process.env.ICECAT_DYNAMODB_ENDPOINT) strict.dynamodb = await startDynamoDBLocal();
  const endpoint = process.env.ICECAT_DYNAMODB_ENDPOINT || (strict.dynamodb as DynamoDBLocal).url;
  const envs = await startStackServers(globalConfig.maxWorkers, strict.stacks, { ICECAT_DYNAMODB_ENDPOINT: endpoint }).catch(
    async (err: unknown) => {
      // jest runs no teardown for a setup that failed: what started is stopped here.
      await stopStackServers(strict.stacks);
      await strict.dynamodb?.stop();
      throw err;
    },
  );
  process.env.ICECAT_TEST_STRICT_STACKS = JSON.stringify(envs.map((env) => ({ ...env, ICECAT_DYNAMODB_ENDPOINT: endpoint })));
}
