/** What the colours of the graph mean; each is also said in words on the nodes. */
export function GraphLegend() {
  return (
    <ul className="legend" aria-label="Legend" data-graph-overlay="">
      <li>
        <span className="legend__swatch legend__swatch--completed" /> Job: last run completed
      </li>
      <li>
        <span className="legend__swatch legend__swatch--failed" /> Job: last run failed
      </li>
      <li>
        <span className="legend__swatch legend__swatch--running" /> Job: running
      </li>
      <li>
        <span className="legend__swatch legend__swatch--dataset" /> Dataset
      </li>
      <li>
        <span className="legend__line legend__line--failed" /> Path to a root cause (dashed red)
      </li>
      <li>
        <span className="legend__line legend__line--column" /> Column lineage
      </li>
    </ul>
  );
}
