import { useCallback, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { api } from '../api/client.js';
import type { Direction } from '../api/types.js';
import { GraphDiffPanel } from '../components/GraphDiffPanel.js';
import { GraphLegend } from '../components/GraphLegend.js';
import { LineageGraph } from '../components/LineageGraph.js';
import { NodePanel } from '../components/NodePanel.js';
import { Async, Empty, ErrorMessage, Loading } from '../components/States.js';
import { TimeTravel } from '../components/TimeTravel.js';
import { useApi } from '../hooks/useApi.js';
import { useColumnEdges } from '../hooks/useColumnEdges.js';
import { useGraphLayout } from '../hooks/useGraphLayout.js';
import { useRootCauses } from '../hooks/useRootCauses.js';
import { causeHighlight, noCauses, rootCauseTargets } from '../graph/cause-highlight.js';
import type { FlowInput } from '../graph/flow-elements.js';
import { nextNode, type NavKey } from '../graph/keyboard-nav.js';
import {
  buildLineageModel,
  focusContext,
  parseFocus,
  pathBetween,
  type LineageModel,
} from '../graph/lineage-model.js';
import { parseNodeId, paths } from '../paths.js';

const directions: Direction[] = ['upstream', 'both', 'downstream'];
/** The focus choices: none, the selection's whole lineage, or so many hops each way. */
const focusOptions = [
  ['', 'Off'],
  ['lineage', 'Its lineage'],
  ['1', '1 hop'],
  ['2', '2 hops'],
  ['4', '4 hops'],
] as const;
const focusValue = (param: string | null): string => String(parseFocus(param) ?? '');
const noHighlight = { nodes: new Set<string>(), edges: new Set<string>() };
const navKeys = new Set<string>(['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown']);

/**
 * The page's view state, all of it in the URL so a pasted link shows what the sender saw: `node`, `depth`,
 * `direction`, `select`, `to` (the other end of a highlighted path), `asOf` (time travel), `compare` (the graph
 * diff from that time to now), `focus` (`lineage` or a hop count: what is not on the selection's paths is
 * faded), `cols` (datasets whose columns are shown) and `collapsed` (groups), the last two repeated once per id.
 */
function useLineageParams() {
  const [params, setParams] = useSearchParams();
  const update = useCallback(
    (changes: Record<string, string | readonly string[] | undefined>) =>
      setParams(
        (previous) => {
          const next = new URLSearchParams(previous);
          for (const [key, value] of Object.entries(changes)) {
            next.delete(key);
            if (typeof value === 'string') next.set(key, value);
            else if (value) for (const item of value) next.append(key, item);
          }
          return next;
        },
        { replace: true },
      ),
    [setParams],
  );
  return { params, update };
}

/** `/lineage?node=&depth=&direction=&select=&asOf=...`: the lineage graph around one dataset or job. */
export function LineagePage() {
  const { params, update } = useLineageParams();
  const nodeId = params.get('node') ?? '';
  const depth = Math.min(20, Math.max(1, Number(params.get('depth') ?? 3) || 3));
  const direction = (directions as string[]).includes(params.get('direction') ?? '')
    ? (params.get('direction') as Direction)
    : 'both';
  const asOf = params.get('asOf') ?? undefined;
  const compare = params.get('compare') === 'now' && asOf !== undefined;

  const parsed = parseNodeId(nodeId);
  const state = useApi(`lineage:${nodeId}:${depth}:${direction}:${asOf ?? ''}`, (signal) =>
    api.lineage(nodeId, depth, direction, signal, asOf),
  );
  // Today's graph bounds the timeline (its oldest node and newest run); with asOf it is a second request.
  const present = useApi(`lineage:${nodeId}:${depth}:${direction}:`, (signal) =>
    api.lineage(nodeId, depth, direction, signal),
  );
  const model = useMemo(
    () => (state.status === 'ready' ? buildLineageModel(state.data) : undefined),
    [state],
  );

  if (!parsed)
    return <Empty>Choose a dataset or a job to see its lineage: press Ctrl-K (⌘K) to search.</Empty>;
  return (
    <div className="lineage-page">
      <div className="toolbar" role="toolbar" aria-label="Lineage options">
        <h1 className="toolbar__title">
          Lineage of <span className="mono">{parsed.name}</span>
        </h1>
        <div className="segmented" role="group" aria-label="Direction">
          {directions.map((d) => (
            <button
              key={d}
              type="button"
              aria-pressed={direction === d}
              onClick={() => update({ direction: d })}
            >
              {d === 'both' ? 'Both' : d === 'upstream' ? 'Upstream' : 'Downstream'}
            </button>
          ))}
        </div>
        <label className="depth">
          Depth
          <input
            type="number"
            min={1}
            max={20}
            value={depth}
            onChange={(event) => update({ depth: event.target.value })}
          />
        </label>
        <label className="depth">
          Focus
          <select
            value={focusValue(params.get('focus'))}
            onChange={(event) => update({ focus: event.target.value || undefined })}
          >
            {focusOptions.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {present.status === 'ready' && (
          <TimeTravel
            graph={present.data}
            asOf={asOf}
            compare={compare}
            onChange={(time) => update({ asOf: time, ...(time ? {} : { compare: undefined }) })}
            onCompare={(on) => update({ compare: on ? 'now' : undefined })}
          />
        )}
      </div>
      {compare && asOf && <GraphDiffPanel nodeId={nodeId} from={asOf} depth={depth} direction={direction} />}
      <Async
        state={state}
        what="the lineage"
        notFound={
          asOf
            ? `${parsed.name} did not exist yet at ${asOf}: move the timeline later.`
            : `Nothing named ${nodeId} is known to this server.`
        }
      >
        {() =>
          model ? (
            <LineageView model={model} rootId={nodeId} depth={depth} asOf={asOf} />
          ) : (
            <Loading what="the lineage" />
          )
        }
      </Async>
    </div>
  );
}

const toggled = (list: readonly string[], id: string) =>
  list.includes(id) ? list.filter((item) => item !== id) : [...list, id];

/** The graph and its panel for a loaded model; every choice made here is kept in the URL. */
function LineageView({
  model,
  rootId,
  depth,
  asOf,
}: {
  model: LineageModel;
  rootId: string;
  depth: number;
  asOf: string | undefined;
}) {
  const { params, update } = useLineageParams();
  const navigate = useNavigate();
  const { layout, error } = useGraphLayout(model);
  const colsParam = params.getAll('cols').join('\n');
  const collapsedParam = params.getAll('collapsed').join('\n');
  const expandedColumns = useMemo(
    () => new Set(colsParam ? colsParam.split('\n').filter((id) => model.nodes.has(id)) : []),
    [colsParam, model],
  );
  const collapsedGroups = useMemo(
    () => new Set(collapsedParam ? collapsedParam.split('\n') : []),
    [collapsedParam],
  );
  const columnEdges = useColumnEdges(model, expandedColumns, depth);
  const [focus, setFocus] = useState<{ id: string; seq: number }>();

  const selectParam = params.get('select');
  const selectedId = selectParam && model.nodes.has(selectParam) ? selectParam : rootId;
  const toParam = params.get('to');
  const pathToId = toParam && model.nodes.has(toParam) ? toParam : undefined;

  // Root cause is the server's answer about the present; a graph of the past is shown without it.
  const targets = useMemo(() => (asOf ? [] : rootCauseTargets(model, selectedId)), [model, selectedId, asOf]);
  const rootCause = useRootCauses(targets);
  const causes = useMemo(
    () => (rootCause.status === 'ready' ? causeHighlight(rootCause.data) : noCauses),
    [rootCause],
  );
  const path = useMemo(
    () => (pathToId ? pathBetween(model, selectedId, pathToId) : noHighlight),
    [model, selectedId, pathToId],
  );
  const focusMode = parseFocus(params.get('focus'));
  const context = useMemo(
    () => (focusMode === undefined ? undefined : focusContext(model, selectedId, focusMode)),
    [model, selectedId, focusMode],
  );

  // Read through a ref: actions that changed with every URL change would re-render every node on a click.
  const paramsRef = useRef(params);
  paramsRef.current = params;
  const actions = useMemo(
    () => ({
      toggleColumns: (id: string) => update({ cols: toggled(paramsRef.current.getAll('cols'), id) }),
      toggleGroup: (id: string) => update({ collapsed: toggled(paramsRef.current.getAll('collapsed'), id) }),
    }),
    [update],
  );
  const input = useMemo<FlowInput | undefined>(
    () =>
      layout && {
        model,
        layout,
        rootId,
        selectedId,
        causes,
        path,
        expandedColumns,
        columnEdges: columnEdges.edges,
        collapsedGroups,
        context,
      },
    [
      model,
      layout,
      rootId,
      selectedId,
      causes,
      path,
      expandedColumns,
      columnEdges.edges,
      collapsedGroups,
      context,
    ],
  );

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!layout || event.target !== event.currentTarget) return;
    if (navKeys.has(event.key)) {
      event.preventDefault();
      const next = nextNode(model, layout, selectedId, event.key as NavKey);
      if (next) {
        update({ select: next, to: undefined });
        setFocus((previous) => ({ id: next, seq: (previous?.seq ?? 0) + 1 }));
      }
    } else if (event.key === 'Enter') {
      event.preventDefault();
      void navigate(paths.node(selectedId));
    } else if (event.key === 'c' && model.nodes.get(selectedId)?.type === 'DATASET') {
      actions.toggleColumns(selectedId);
    }
  };

  if (error) return <ErrorMessage error={error} />;
  if (model.nodes.size === 0) return <Empty>This node has no lineage yet.</Empty>;
  const selected = model.nodes.get(selectedId)!;
  return (
    <div className="lineage-layout">
      <div
        className="graph-frame"
        data-testid="lineage-graph"
        tabIndex={0}
        role="application"
        aria-roledescription="lineage graph"
        aria-label={`Lineage graph, ${model.nodes.size} nodes. Selected: ${selected.data.name}. Arrow keys move the selection along edges and within a column, Enter opens the selected node, C shows its columns.`}
        onKeyDown={onKeyDown}
      >
        {input ? (
          <LineageGraph
            input={input}
            actions={actions}
            focus={focus}
            onNodeClick={(id, withShift) =>
              withShift && id !== selectedId ? update({ to: id }) : update({ select: id, to: undefined })
            }
          />
        ) : (
          <Loading what="the layout" />
        )}
        <GraphLegend />
        {context && (
          <p className="graph-focus" role="status">
            Focus on {selected.data.name}: {context.nodes.size} of {model.nodes.size} nodes{' '}
            {focusMode === 'lineage'
              ? 'upstream and downstream'
              : `within ${focusMode} ${focusMode === 1 ? 'hop' : 'hops'}`}
            , the rest faded.
          </p>
        )}
      </div>
      <NodePanel
        node={selected}
        rootCause={rootCause}
        targets={targets}
        asOf={asOf}
        pathTo={pathToId ? model.nodes.get(pathToId) : undefined}
        pathLength={path.nodes.size}
        columnsShown={expandedColumns.has(selectedId)}
        onToggleColumns={() => actions.toggleColumns(selectedId)}
        onClearPath={() => update({ to: undefined })}
        recenterUrl={paths.lineage(selectedId, { depth })}
      />
      {columnEdges.error && <ErrorMessage error={columnEdges.error} />}
    </div>
  );
}
