import type { JourneyJson } from '../api/analysis.js';
import { axisFraction, axisTicks, ownerChanges } from '../api/journey.js';
import { formatOwnerList, formatTime } from '../format.js';
import { nodeLabel } from '../paths.js';

const percent = (fraction: number) => `${(fraction * 100).toFixed(3)}%`;
/** A hop whose runs all fall at one instant still gets a bar a person can see. */
const MIN_BAR = 0.006;

/**
 * A journey over its window: a time axis from `bounds.from` to `bounds.to`, the owner changes of its nodes as
 * markers on it, and one lane per hop with a bar from its first run to its last. What colour shows is also said
 * in words: a masked hop's bar is dashed and says "masked", a transfer between jurisdictions says which.
 */
export function JourneyLanes({ journey }: { journey: JourneyJson }) {
  const { bounds } = journey;
  const jurisdiction = new Map(journey.nodes.map((node) => [node.nodeId, node.jurisdiction]));
  const changes = ownerChanges(journey.nodes);
  const at = (iso: string) => percent(axisFraction(iso, bounds));
  return (
    <div className="journey-lanes">
      <div className="journey-lanes__row journey-lanes__axis" aria-hidden="true">
        <span className="journey-lanes__label" />
        <span className="journey-lanes__track">
          {axisTicks(bounds, 3).map((tick, index, ticks) => (
            <span
              key={tick}
              className={`journey-lanes__tick${index === ticks.length - 1 ? ' journey-lanes__tick--end' : ''}`}
              style={{ left: at(tick) }}
            >
              {formatTime(tick)}
            </span>
          ))}
        </span>
        <span />
      </div>
      <div className="journey-lanes__row">
        <span className="journey-lanes__label muted small">Owner changes</span>
        <span className="journey-lanes__track" role="list" aria-label="Owner changes">
          {changes.length === 0 && <span className="muted small">None in the window.</span>}
          {changes.map((change) => {
            const text = `${nodeLabel(change.nodeId)}: owners ${formatOwnerList(change.before)} → ${formatOwnerList(change.owners)} from ${change.at}`;
            return (
              <span
                key={`${change.nodeId}@${change.at}`}
                role="listitem"
                className="journey-lanes__marker"
                style={{ left: at(change.at) }}
                title={text}
                aria-label={text}
              >
                ◆
              </span>
            );
          })}
        </span>
        <span />
      </div>
      <ol className="journey-lanes__hops" aria-label="Hops over the window">
        {journey.hops.map((hop) => {
          const left = axisFraction(hop.runs.first, bounds);
          const width = Math.max(MIN_BAR, axisFraction(hop.runs.last, bounds) - left);
          const transfer = hop.transfer
            ? `transfer ${jurisdiction.get(hop.from) ?? '?'} → ${jurisdiction.get(hop.to) ?? '?'}`
            : undefined;
          const runs = `${hop.runs.count} ${hop.runs.count === 1 ? 'run' : 'runs'}`;
          return (
            <li
              key={`${hop.from} ${hop.to} ${hop.job}`}
              className={`journey-lanes__row journey-lane${hop.masked ? ' journey-lane--masked' : ''}${
                hop.transfer ? ' journey-lane--transfer' : ''
              }`}
            >
              <span className="journey-lanes__label">
                <span className="journey-lane__hop" title={`${hop.from} → ${hop.to}`}>
                  {nodeLabel(hop.from)} → {nodeLabel(hop.to)}
                </span>
                <span className="muted small" title={hop.job}>
                  {' '}
                  via {nodeLabel(hop.job)}
                </span>
              </span>
              <span className="journey-lanes__track">
                <span
                  className="journey-lane__bar"
                  style={{ left: percent(Math.min(left, 1 - MIN_BAR)), width: percent(width) }}
                  title={`${runs} from ${hop.runs.first} to ${hop.runs.last}`}
                />
              </span>
              <span className="journey-lanes__marks">
                <span className="journey-lane__runs">{runs}</span>
                {hop.masked && <span className="journey-lane__word">masked</span>}
                {transfer && (
                  <span className="journey-lane__word journey-lane__word--transfer">{transfer}</span>
                )}
              </span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
