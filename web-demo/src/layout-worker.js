// The graph view's layout worker: lays out (layout.js) what the page posts, { id, graph, groups,
// expanded (an array of block paths) }, and answers { id, layout } or { id, error }. The page
// keeps only the answer to its latest request (graph.js).
import { layoutGraph } from './layout.js';

self.onmessage = ({ data: { id, graph, groups, expanded } }) => {
  try {
    self.postMessage({ id, layout: layoutGraph(graph, groups, new Set(expanded)) });
  } catch (e) {
    self.postMessage({ id, error: e?.message ?? String(e) });
  }
};
