import { useEffect } from 'react';
import { Link, NavLink, Route, Routes, useLocation } from 'react-router';
import { signOut, startAuth } from '../api/auth.js';
import { CALLBACK_PATH } from '../api/oidc.js';
import { useAuth } from '../hooks/useAuth.js';
import { useShownPreview, usePreviews } from '../hooks/usePreview.js';
import { useSearchPalette } from '../hooks/useSearchPalette.js';
import { BenchGraphPage } from '../routes/BenchGraphPage.js';
import { DatasetPage } from '../routes/DatasetPage.js';
import { HomePage } from '../routes/HomePage.js';
import { ImpactPage } from '../routes/ImpactPage.js';
import { IncidentPage } from '../routes/IncidentPage.js';
import { IncidentsPage } from '../routes/IncidentsPage.js';
import { RunDiffPage } from '../routes/RunDiffPage.js';
import { JobPage } from '../routes/JobPage.js';
import { LineagePage } from '../routes/LineagePage.js';
import { PreviewDiffPage } from '../routes/PreviewDiffPage.js';
import { RunPage } from '../routes/RunPage.js';
import { SignInCallback, SignInPage } from '../routes/SignInPage.js';
import { WorkflowPage } from '../routes/WorkflowPage.js';
import { paths } from '../paths.js';
import { PreviewBanner, PreviewSwitcher } from './PreviewSwitcher.js';
import { Empty, Loading } from './States.js';
import { SearchPalette } from './SearchPalette.js';

/**
 * The frame of every page: the header with the search button, the preview switcher and the session, and the
 * routes; or, while the server needs credentials this tab does not have, the sign-in screen in their place.
 */
export function App() {
  const auth = useAuth();
  const location = useLocation();
  useEffect(() => void startAuth(), []);
  const [searchOpen, setSearchOpen] = useSearchPalette();
  const mac = /Mac|iPhone|iPad/.test(navigator.platform);
  const callback = location.pathname === CALLBACK_PATH;
  const browsing = !callback && (auth.status === 'open' || auth.status === 'signed-in');
  const preview = useShownPreview();
  const previews = usePreviews(browsing);
  return (
    <div className="app">
      <header className={preview === undefined ? 'header' : 'header header--preview'}>
        <Link to="/" className="header__brand">
          <img src="/favicon.svg" alt="" width={22} height={22} /> Headwater
        </Link>
        {browsing && (
          <nav className="header__nav" aria-label="Main">
            <NavLink to={paths.incidents()}>Incidents</NavLink>
          </nav>
        )}
        {browsing && <PreviewSwitcher previews={previews} shown={preview} />}
        {browsing && (
          <button type="button" className="header__search" onClick={() => setSearchOpen(true)}>
            Search datasets, jobs, columns <kbd>{mac ? '⌘K' : 'Ctrl K'}</kbd>
          </button>
        )}
        {auth.status === 'signed-in' && !callback && (
          <div className="header__session">
            <span>
              Signed in as <strong>{auth.credential.name}</strong>
            </span>
            <button type="button" className="header__signout" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main className="main">
        {callback ? (
          <SignInCallback />
        ) : auth.status === 'starting' ? (
          <Loading what="Headwater" />
        ) : auth.status === 'signed-out' ? (
          <SignInPage config={auth.config} reason={auth.reason} />
        ) : (
          <>
            {preview !== undefined && <PreviewBanner previews={previews} shown={preview} />}
            {/* Keyed by the preview: switching loads every view again, from the other store. */}
            <Routes key={preview ?? ''}>
              <Route path="/" element={<HomePage />} />
              <Route path="/lineage" element={<LineagePage />} />
              <Route path="/datasets/:namespace/:name" element={<DatasetPage />} />
              <Route path="/datasets/:namespace/:name/journey" element={<DatasetPage tab="journey" />} />
              <Route path="/jobs/:namespace/:name" element={<JobPage />} />
              <Route path="/impact" element={<ImpactPage />} />
              <Route path="/runs/compare" element={<RunDiffPage />} />
              <Route path="/runs/:runId" element={<RunPage />} />
              <Route path="/runs/:runId/workflow" element={<WorkflowPage />} />
              {/* The server's messages link to /incidents/<id> (alerts/notice.ts): keep the two in step. */}
              <Route path="/incidents" element={<IncidentsPage />} />
              <Route path="/incidents/:id" element={<IncidentPage />} />
              <Route path="/previews/:name" element={<PreviewDiffPage />} />
              <Route path="/bench/graph" element={<BenchGraphPage />} />
              <Route
                path="*"
                element={
                  <Empty>
                    There is no page at this address. <Link to="/">Go to the home page</Link>.
                  </Empty>
                }
              />
            </Routes>
          </>
        )}
      </main>
      {searchOpen && browsing && <SearchPalette onClose={() => setSearchOpen(false)} />}
    </div>
  );
}
