// Checked by `npm run typecheck`, not run: the error family's one constructor shape (lib/errors.ts) is
// `new XError(message, options)`, whatever the error is about named in `options`. A message where an id goes, or an id
// given positionally, must not compile (issue 29, item 15: "batch batch X was closed … is closed").
import { BatchNotFoundError, InvalidParameterError } from '../../lib/api/errors';
import { ApiAnswerError, OutOfSpaceError } from '../../lib/cli/errors';
import { BatchClosedError } from '../../lib/errors';
import { RejectedUploadError } from '../../lib/ingest/errors';

export const shapes = [
  new BatchClosedError('batch b1 was closed before this upload was counted', { batchId: 'b1' }),
  new BatchNotFoundError('batch b1 not found', { batchId: 'b1' }),
  new InvalidParameterError('must be at most 1000', { parameter: 'limit' }),
  new ApiAnswerError('not found', { status: 404, code: 'not_found' }),
  new OutOfSpaceError('full', { service: 'S3', cause: new Error('ENOSPC') }),
  new RejectedUploadError('the image is 50x50', { code: 'ImageTooSmall' }),

  // @ts-expect-error the old (batchId, message) shape: the second argument is the options, not a message
  new BatchClosedError('b1', 'batch b1 was closed before this upload was counted'),
  // @ts-expect-error a message alone: the batch it is about must be named
  new BatchClosedError('batch b1 was closed before this upload was counted'),
  // @ts-expect-error an id alone is not an error's message and names nothing
  new BatchNotFoundError('b1'),
  // @ts-expect-error the old (parameter, message) shape
  new InvalidParameterError('limit', 'must be at most 1000'),
  // @ts-expect-error the old (status, code, message) shape
  new ApiAnswerError(404, 'not_found', 'not found'),
  // @ts-expect-error the old (code, message) shape
  new RejectedUploadError('ImageTooSmall', 'the image is 50x50'),
  // @ts-expect-error options name what the error is about; a misspelt field is refused
  new BatchClosedError('batch b1 is closed', { batch: 'b1' }),
];
