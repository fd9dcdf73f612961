import { createContext, useContext } from 'react';

/** What a graph node can ask of the graph, without threading callbacks through node data. */
export interface GraphActions {
  toggleColumns: (datasetId: string) => void;
  toggleGroup: (groupId: string) => void;
}

export const GraphActionsContext = createContext<GraphActions>({
  toggleColumns: () => undefined,
  toggleGroup: () => undefined,
});

/** The actions of the enclosing {@link GraphActionsContext}. */
export const useGraphActions = (): GraphActions => useContext(GraphActionsContext);
