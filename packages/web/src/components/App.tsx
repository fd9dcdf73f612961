import { Link, Route, Routes } from 'react-router';
import { useSearchPalette } from '../hooks/useSearchPalette.js';
import { BenchGraphPage } from '../routes/BenchGraphPage.js';
import { DatasetPage } from '../routes/DatasetPage.js';
import { HomePage } from '../routes/HomePage.js';
import { ImpactPage } from '../routes/ImpactPage.js';
import { RunDiffPage } from '../routes/RunDiffPage.js';
import { JobPage } from '../routes/JobPage.js';
import { LineagePage } from '../routes/LineagePage.js';
import { RunPage } from '../routes/RunPage.js';
import { WorkflowPage } from '../routes/WorkflowPage.js';
import { Empty } from './States.js';
import { SearchPalette } from './SearchPalette.js';

/** The frame of every page: the header with the search button, and the routes. */
export function App() {
  const [searchOpen, setSearchOpen] = useSearchPalette();
  const mac = /Mac|iPhone|iPad/.test(navigator.platform);
  return (
    <div className="app">
      <header className="header">
        <Link to="/" className="header__brand">
          <img src="/favicon.svg" alt="" width={22} height={22} /> Headwater
        </Link>
        <button type="button" className="header__search" onClick={() => setSearchOpen(true)}>
          Search datasets, jobs, columns <kbd>{mac ? '⌘K' : 'Ctrl K'}</kbd>
        </button>
      </header>
      <main className="main">
        <Routes>
          <Route path="/" element={<HomePage />} />
          <Route path="/lineage" element={<LineagePage />} />
          <Route path="/datasets/:namespace/:name" element={<DatasetPage />} />
          <Route path="/jobs/:namespace/:name" element={<JobPage />} />
          <Route path="/impact" element={<ImpactPage />} />
          <Route path="/runs/compare" element={<RunDiffPage />} />
          <Route path="/runs/:runId" element={<RunPage />} />
          <Route path="/runs/:runId/workflow" element={<WorkflowPage />} />
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
      </main>
      {searchOpen && <SearchPalette onClose={() => setSearchOpen(false)} />}
    </div>
  );
}
