// Runs before each strict integration file (jest.config.js): points it at its jest worker's stack on DynamoDB Local
// (test/global-setup-strict.ts), ICECAT_DYNAMODB_ENDPOINT included, so a stack the file starts itself uses it too.
import { applyWorkerStack } from './stack-env';

applyWorkerStack(process.env.ICECAT_TEST_STRICT_STACKS);
