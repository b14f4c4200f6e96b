// The one error family of local/: every failure the local stack, its stand-ins and its commands name extends
// LocalStackError, itself of lib's family (lib/errors.ts): a stable snake_case `code` each, `name` the class's, built
// as `new XError(message, options)`. A failure lib/ already names keeps lib's class (a bad ICECAT_*_PORT is a
// ConfigError: LocalEnvError in contract.ts), and an answer a stand-in gives in its service's own shape keeps that
// shape (s3rver's S3Error, the Rekognition types of detector/errors.ts). Below every room: imports nothing of local/.
import { IceCatError } from '../lib/errors';

export abstract class LocalStackError extends IceCatError {
  override name = 'LocalStackError';
}
