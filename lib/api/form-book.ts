// The upload forms a client holds for files it declared and has not sent yet, each renewed (POST …/uploads with
// renew) when it expired or is about to: a client that asks for its forms ahead of its files (the CLI 100 ahead, the
// web app all at once) loses none to S3's "Policy expired" on a slow line. Shared by the CLI and the web app, so it
// imports nothing but the contract's types.
import type { UploadForm } from './client-contract';

/**
 * A form is renewed before it is used once less than this part of its lifetime is left (at most RENEW_MARGIN_MS):
 * a file started just in time must still reach S3 before the policy expires.
 */
const RENEW_MARGIN_SHARE = 0.25;
const RENEW_MARGIN_MS = 60_000;

interface HeldForm {
  form: UploadForm;
  /** When it stops working (the API's expiresAt), and when it should be renewed, in this machine's clock. */
  expiresAtMs: number;
  renewAtMs: number;
}

/** The forms of the files declared and not yet sent, each renewed (in groups) when it expired or is about to. */
export class FormBook<F extends { name: string }> {
  private readonly held = new Map<string, { file: F; form: HeldForm }>();
  private renewal: Promise<void> | undefined;
  /** Files being sent: a renewal for another file leaves their forms alone. */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly renew: (files: F[]) => Promise<{ uploads: UploadForm[]; expiresAt?: string }>,
    private readonly now: () => number,
    private readonly groupSize: number,
  ) {}

  /** Forms as the API answered them, `askedAtMs` when the request was sent. */
  add(files: readonly F[], answer: { uploads: UploadForm[]; expiresAt?: string }, askedAtMs: number): void {
    const byName = new Map(answer.uploads.map((u) => [u.file, u]));
    const expiresAtMs = answer.expiresAt ? Date.parse(answer.expiresAt) : Infinity;
    // The lifetime as seen here: a clock that differs from the API's moves both ends alike.
    const margin = Math.min(RENEW_MARGIN_MS, Math.max(0, (expiresAtMs - askedAtMs) * RENEW_MARGIN_SHARE));
    for (const file of files) {
      const form = byName.get(file.name);
      if (form) this.held.set(file.name, { file, form: { form, expiresAtMs, renewAtMs: expiresAtMs - margin } });
    }
  }

  has(name: string): boolean {
    return this.held.has(name);
  }

  /** The file's form, renewed first if it is due (or `force`d: S3 said it expired); renewed at most once a call. */
  async take(name: string, force = false): Promise<UploadForm> {
    const entry = this.held.get(name);
    if (!entry) throw new Error(`no upload form held for ${name}`);
    this.inFlight.add(name);
    if (force || this.now() >= entry.form.renewAtMs) await this.renewDue(entry.file, force ? entry.form : undefined);
    const fresh = this.held.get(name);
    if (!fresh || (force && fresh.form === entry.form)) throw new Error(`the API renewed no upload form for ${name}`);
    return fresh.form.form;
  }

  drop(name: string): void {
    this.held.delete(name);
    this.inFlight.delete(name);
  }

  /** One renewal at a time: `file` and every other held form that is due, up to a declaration's size. */
  private async renewDue(file: F, stale: HeldForm | undefined): Promise<void> {
    while (this.renewal) await this.renewal;
    const current = this.held.get(file.name);
    if (!current || (current.form !== stale && this.now() < current.form.renewAtMs)) return;
    const others = [...this.held.values()].filter(
      (e) => e.file !== file && !this.inFlight.has(e.file.name) && this.now() >= e.form.renewAtMs,
    );
    const due = [file, ...others.map((e) => e.file)].slice(0, this.groupSize);
    const askedAtMs = this.now();
    this.renewal = this.renew(due).then((answer) => this.add(due, answer, askedAtMs));
    try {
      await this.renewal;
    } finally {
      this.renewal = undefined;
    }
  }
}
