import { useEffect, useRef, type MouseEvent } from 'react';
import type { Viewport } from '@xyflow/react';
import type { FlowNode } from '../graph/flow-elements.js';

const width = 200;
const height = 140;

/** The frame's viewport shown on the overview: call it from the graph's onMove. */
export type OverviewUpdate = (viewport: Viewport, frame: { width: number; height: number }) => void;

/**
 * The overview of a large graph: every node a dot on a canvas drawn once per layout, and the visible part as a
 * rectangle moved through its style on each pan or zoom. xyflow's own minimap draws an SVG element per node and
 * redraws on every move, which halved the frame rate of panning 5,000 nodes; this costs one style write.
 */
export function GraphOverview({
  nodes,
  onReady,
  onJump,
}: {
  nodes: readonly FlowNode[];
  onReady: (update: OverviewUpdate) => void;
  onJump: (x: number, y: number) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const bounds = useRef({ minX: 0, minY: 0, scale: 1 });
  useEffect(() => {
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (const n of nodes) {
      if (n.parentId) continue;
      minX = Math.min(minX, n.position.x);
      minY = Math.min(minY, n.position.y);
      maxX = Math.max(maxX, n.position.x + (n.width ?? 0));
      maxY = Math.max(maxY, n.position.y + (n.height ?? 0));
    }
    const scale = Math.min(width / Math.max(1, maxX - minX), height / Math.max(1, maxY - minY));
    bounds.current = { minX, minY, scale };
    const context = canvas.current?.getContext('2d');
    if (!context) return;
    context.clearRect(0, 0, width, height);
    for (const n of nodes) {
      if (n.parentId) continue;
      const failed = n.type === 'job' && (n.data.state === 'FAILED' || n.data.state === 'ABORTED');
      context.fillStyle = n.type === 'dataset' ? '#94a3b8' : failed ? '#dc2626' : '#16a34a';
      context.fillRect(
        (n.position.x - minX) * scale,
        (n.position.y - minY) * scale,
        Math.max(1, (n.width ?? 0) * scale),
        Math.max(1, (n.height ?? 0) * scale),
      );
    }
  }, [nodes]);
  useEffect(() => {
    onReady((viewport, frame) => {
      const { minX, minY, scale } = bounds.current;
      const style = box.current?.style;
      if (!style) return;
      style.left = `${(-viewport.x / viewport.zoom - minX) * scale}px`;
      style.top = `${(-viewport.y / viewport.zoom - minY) * scale}px`;
      style.width = `${(frame.width / viewport.zoom) * scale}px`;
      style.height = `${(frame.height / viewport.zoom) * scale}px`;
    });
  }, [onReady]);
  const jump = (event: MouseEvent<HTMLDivElement>) => {
    const rect = event.currentTarget.getBoundingClientRect();
    const { minX, minY, scale } = bounds.current;
    onJump((event.clientX - rect.left) / scale + minX, (event.clientY - rect.top) / scale + minY);
  };
  return (
    <div
      className="graph-overview"
      onClick={jump}
      role="img"
      aria-label={`Overview of ${nodes.length} nodes`}
    >
      <canvas ref={canvas} width={width} height={height} />
      <div ref={box} className="graph-overview__viewport" />
    </div>
  );
}
