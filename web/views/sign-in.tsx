import { useState } from 'preact/hooks';
import { ApiRequestError, createApi } from '../api';

/** The key is checked with one cheap authenticated read before it is kept (in sessionStorage, for this tab only). */
export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    const candidate = key.trim();
    if (!candidate) {
      setError('Enter your API key.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await createApi(candidate, () => undefined).get('/v1/images', { limit: 1 });
      onSignedIn(candidate);
    } catch (err) {
      setError(
        err instanceof ApiRequestError && err.status === 401
          ? 'The API does not know this key.'
          : `Could not sign in: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>IceCatWrangler</h1>
      <p>Which of your images show a cat. Sign in with the API key your administrator gave you.</p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          required
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <p id="sign-in-error" class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <p class="hint">The key stays in this tab only and is sent only in the Authorization header.</p>
    </main>
  );
}
