import { useCallback, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api/client.js';
import type { Direction } from '../api/types.js';
import { GraphLegend } from '../components/GraphLegend.js';
import { LineageGraph } from '../components/LineageGraph.js';
import { NodePanel } from '../components/NodePanel.js';
import { Async, Empty, ErrorMessage, Loading } from '../components/States.js';
import { useApi } from '../hooks/useApi.js';
import { useColumnEdges } from '../hooks/useColumnEdges.js';
import { useGraphLayout } from '../hooks/useGraphLayout.js';
import type { FlowInput } from '../graph/flow-elements.js';
import { buildLineageModel, failedUpstream, pathBetween, type LineageModel } from '../graph/lineage-model.js';
import { parseNodeId, paths } from '../paths.js';

const directions: Direction[] = ['upstream', 'both', 'downstream'];
const noHighlight = { nodes: new Set<string>(), edges: new Set<string>() };

/** `/lineage?node=&depth=&direction=&select=`: the lineage graph around one dataset or job. */
export function LineagePage() {
  const [params, setParams] = useSearchParams();
  const nodeId = params.get('node') ?? '';
  const depth = Math.min(20, Math.max(1, Number(params.get('depth') ?? 3) || 3));
  const direction = (directions as string[]).includes(params.get('direction') ?? '')
    ? (params.get('direction') as Direction)
    : 'both';
  const update = (changes: Record<string, string | undefined>) =>
    setParams(
      (previous) => {
        const next = new URLSearchParams(previous);
        for (const [key, value] of Object.entries(changes))
          if (value === undefined) next.delete(key);
          else next.set(key, value);
        return next;
      },
      { replace: true },
    );

  const parsed = parseNodeId(nodeId);
  const state = useApi(`lineage:${nodeId}:${depth}:${direction}`, (signal) =>
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
      </div>
      <Async state={state} what="the lineage" notFound={`Nothing named ${nodeId} is known to this server.`}>
        {() =>
          model ? <LineageView model={model} rootId={nodeId} depth={depth} /> : <Loading what="the lineage" />
        }
      </Async>
    </div>
  );
}

/** The graph and its panel for a loaded model; selection lives in the URL so a link shows the same thing. */
function LineageView({ model, rootId, depth }: { model: LineageModel; rootId: string; depth: number }) {
  const [params, setParams] = useSearchParams();
  const { layout, error } = useGraphLayout(model);
  const [expandedColumns, setExpandedColumns] = useState<ReadonlySet<string>>(new Set());
  const [collapsedGroups, setCollapsedGroups] = useState<ReadonlySet<string>>(new Set());
  const columnEdges = useColumnEdges(model, expandedColumns, depth);

  const selectParam = params.get('select');
  const selectedId = selectParam && model.nodes.has(selectParam) ? selectParam : rootId;
  const toParam = params.get('to');
  const pathToId = toParam && model.nodes.has(toParam) ? toParam : undefined;

  const failed = useMemo(() => failedUpstream(model, selectedId), [model, selectedId]);
  const path = useMemo(
    () => (pathToId ? pathBetween(model, selectedId, pathToId) : noHighlight),
    [model, selectedId, pathToId],
  );

  const setParam = useCallback(
    (changes: Record<string, string | undefined>) =>
      setParams(
        (previous) => {
          const next = new URLSearchParams(previous);
          for (const [key, value] of Object.entries(changes))
            if (value === undefined) next.delete(key);
            else next.set(key, value);
          return next;
        },
        { replace: true },
      ),
    [setParams],
  );
  const toggle = (set: ReadonlySet<string>, id: string) => {
    const next = new Set(set);
    if (!next.delete(id)) next.add(id);
    return next;
  };
  const actions = useMemo(
    () => ({
      toggleColumns: (id: string) => setExpandedColumns((previous) => toggle(previous, id)),
      toggleGroup: (id: string) => setCollapsedGroups((previous) => toggle(previous, id)),
    }),
    [],
  );
  const input = useMemo<FlowInput | undefined>(
    () =>
      layout && {
        model,
        layout,
        rootId,
        selectedId,
        failed,
        path,
        expandedColumns,
        columnEdges: columnEdges.edges,
        collapsedGroups,
      },
    [model, layout, rootId, selectedId, failed, path, expandedColumns, columnEdges.edges, collapsedGroups],
  );

  if (error) return <ErrorMessage error={error} />;
  if (model.nodes.size === 0) return <Empty>This node has no lineage yet.</Empty>;
  const selected = model.nodes.get(selectedId)!;
  return (
    <div className="lineage-layout">
      <div className="graph-frame" data-testid="lineage-graph">
        {input ? (
          <LineageGraph
            input={input}
            actions={actions}
            onNodeClick={(id, withShift) =>
              withShift && id !== selectedId ? setParam({ to: id }) : setParam({ select: id, to: undefined })
            }
          />
        ) : (
          <Loading what="the layout" />
        )}
        <GraphLegend />
      </div>
      <NodePanel
        node={selected}
        failing={failed.failing}
        pathTo={pathToId ? model.nodes.get(pathToId) : undefined}
        pathLength={path.nodes.size}
        columnsShown={expandedColumns.has(selectedId)}
        onToggleColumns={() => actions.toggleColumns(selectedId)}
        onClearPath={() => setParam({ to: undefined })}
        recenterUrl={paths.lineage(selectedId, { depth })}
      />
      {columnEdges.error && <ErrorMessage error={columnEdges.error} />}
    </div>
  );
}
