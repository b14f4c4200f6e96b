/**
 * An answer that is not the route's JSON body: an export's CSV or JSON Lines, or a redirect to where it was stored.
 * A route's operation returns one and the app sends it as it is (lib/http/app.ts).
 */
export class HttpAnswer {
  constructor(
    readonly statusCode: number,
    readonly headers: Record<string, string>,
    readonly body = '',
  ) {}
}
