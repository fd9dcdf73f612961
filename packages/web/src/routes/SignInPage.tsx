import { useEffect, useState, type FormEvent } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { completeSignIn, signInWithKey, signInWithOidc, type AuthConfig } from '../api/auth.js';
import { Loading } from '../components/States.js';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The sign-in screen, shown instead of every page while the server needs credentials and the tab has none: OIDC
 * (the issuer's login page) when the server names a client, and a pasted API key always. `reason` says why the
 * last session ended.
 */
export function SignInPage({ config, reason }: { config: AuthConfig; reason?: string | undefined }) {
  const location = useLocation();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const run = (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    action().then(
      () => setBusy(false),
      (failure: unknown) => {
        setBusy(false);
        setError(messageOf(failure));
      },
    );
  };
  const submitKey = (event: FormEvent) => {
    event.preventDefault();
    run(async () => {
      await signInWithKey(key);
      setKey('');
    });
  };

  return (
    <div className="page signin">
      <section className="card signin__card" aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Headwater</h1>
        {reason && (
          <p className="signin__reason" role="status">
            {reason}
          </p>
        )}
        {error && (
          <p className="state state--error signin__error" role="alert">
            {error}
          </p>
        )}
        {config.oidc && (
          <>
            <button
              type="button"
              className="button signin__oidc"
              disabled={busy}
              onClick={() =>
                run(() => signInWithOidc(`${location.pathname}${location.search}${location.hash}`))
              }
            >
              Sign in with {new URL(config.oidc.issuer).host}
            </button>
            <p className="signin__or">or</p>
          </>
        )}
        <form onSubmit={submitKey} className="signin__key">
          <label htmlFor="signin-key">API key</label>
          <input
            id="signin-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder="hw_…"
            value={key}
            onChange={(event) => setKey(event.target.value)}
          />
          <button type="submit" className="button button--quiet" disabled={busy || key.trim() === ''}>
            Sign in with key
          </button>
          <p className="signin__hint">
            An admin creates one with{' '}
            <code>headwater keys create --name NAME --role reader --namespaces PATTERN</code>. It is kept in
            this tab only and forgotten when the tab closes.
          </p>
        </form>
      </section>
    </div>
  );
}

/**
 * Where the issuer sends the browser back: exchanges the code, then goes to the page the sign-in started from,
 * replacing the callback URL (and its code) in the history.
 */
export function SignInCallback() {
  const navigate = useNavigate();
  const [error, setError] = useState<string>();
  useEffect(() => {
    const url = new URL(location.href);
    // The code and state are spent: off the address bar at once, whatever follows.
    history.replaceState(null, '', '/');
    finishOnce(url).then(
      (returnTo) => void navigate(returnTo, { replace: true }),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [navigate]);
  if (error === undefined) return <Loading what="your session" />;
  return (
    <div className="page signin">
      <section className="card signin__card" role="alert">
        <h1>Sign-in failed</h1>
        <p>{error}</p>
        <a className="button" href="/">
          Back to sign-in
        </a>
      </section>
    </div>
  );
}

let finishing: Promise<string> | undefined;
/** The code can be exchanged once: a second effect run (React's development checks) shares the first's answer. */
function finishOnce(url: URL): Promise<string> {
  finishing ??= completeSignIn(url);
  return finishing;
}
