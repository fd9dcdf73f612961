/// <reference lib="webworker" />
/**
 * The layout's Web Worker: lays out what it is sent and posts the result back, so the main thread only draws.
 */
import { fastLayeredLayout } from './fast-layout.js';
import type { LayoutReply, LayoutRequest } from './layout.js';

const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = (event: MessageEvent<{ id: number; request: LayoutRequest }>) => {
  const { id, request } = event.data;
  let reply: LayoutReply;
  try {
    reply = { id, result: fastLayeredLayout(request) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  scope.postMessage(reply);
};
