interface HttpAnswerOptions {
  /** The body is base64 of bytes (a compressed web app file). */
  isBase64Encoded?: boolean;
  /**
   * Whether the API's own headers (Cache-Control: no-store, nosniff) are added; false for an answer that brings all
   * of its headers (a web app file: cached, under its own security headers). Default true.
   */
  apiHeaders?: boolean;
}

/**
 * An answer that is not the route's JSON document: an export's CSV or JSON Lines, a redirect to where it was stored,
 * a web app file. A route's operation returns one and the app sends it as it is (lib/http/app.ts).
 */
export class HttpAnswer {
  readonly isBase64Encoded: boolean;
  readonly apiHeaders: boolean;

  constructor(
    readonly statusCode: number,
    readonly headers: Record<string, string>,
    readonly body = '',
    options: HttpAnswerOptions = {},
  ) {
    this.isBase64Encoded = options.isBase64Encoded ?? false;
    this.apiHeaders = options.apiHeaders ?? true;
  }
}
