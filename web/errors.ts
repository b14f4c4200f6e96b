// The web app's one error base: every failure it names extends WebAppError and carries a `code`, the API's own
// when the API answered one (the same codes lib/errors.ts gives the server's failures).
export abstract class WebAppError extends Error {
  override name = 'WebAppError';
  abstract readonly code: string;
}
