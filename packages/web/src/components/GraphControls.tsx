import { ControlButton, Controls, type PanelPosition } from '@xyflow/react';

/**
 * xyflow's zoom buttons with a fit button of our own: it fits the graph to the part of the frame the controls
 * leave free (see fitToFreeArea), where xyflow's own would fit it under them.
 */
export function GraphControls({
  onFit,
  onZoomIn,
  onZoomOut,
  position = 'bottom-left',
}: {
  onFit: () => void;
  onZoomIn?: () => void;
  onZoomOut?: () => void;
  position?: PanelPosition;
}) {
  return (
    <Controls
      position={position}
      showInteractive={false}
      showFitView={false}
      {...(onZoomIn ? { onZoomIn } : {})}
      {...(onZoomOut ? { onZoomOut } : {})}
    >
      <ControlButton
        className="react-flow__controls-fitview"
        onClick={onFit}
        title="Fit the graph to the screen"
        aria-label="Fit the graph to the screen"
      >
        <svg viewBox="0 0 32 30" aria-hidden="true">
          <path d="M3.7 11.5V3.7h7.8V0H0v11.5h3.7zM20.5 0v3.7h7.8v7.8H32V0H20.5zM28.3 26.3h-7.8V30H32V18.5h-3.7v7.8zM3.7 18.5H0V30h11.5v-3.7H3.7v-7.8z" />
        </svg>
      </ControlButton>
    </Controls>
  );
}
