/**
 * The analysis worker thread: parses and estimates documents off the server's main thread, so one expensive
 * document never delays requests for another (hovers on file B are answered while file A is analysed). It keeps a
 * mirror of the open documents and its own loader host; the main thread sends document and file events and jobs.
 */
import { parentPort } from 'node:worker_threads';
import { analyzeDocument } from './analyze';
import { core, initCore } from './core';
import { dirname } from 'node:path';
import { createHost, toPath } from './host';
import type { ToWorker, FromWorker } from './workerProtocol';

const docs = new Map<string, string>();
let root: string | undefined;
let folders: readonly string[] = [];
// Reads stay inside the workspace folders; with none open, inside the folders of the open documents (as on the main
// thread, server/features/server.ts readFolders).
const readFolders = () => (folders.length ? folders : [...docs.keys()].map((u) => toPath(u)).filter((p): p is string => !!p).map((p) => dirname(p)));
const host = createHost((uri) => docs.get(uri), () => root, Date.now, readFolders);
const ready = initCore();

function post(m: FromWorker): void {
  parentPort?.postMessage(m);
}

parentPort?.on('message', (m: ToWorker) => {
  switch (m.type) {
    case 'folders':
      root = m.root;
      folders = m.folders;
      host.invalidate();
      return;
    case 'document':
      if (m.text === undefined) docs.delete(m.uri);
      else docs.set(m.uri, m.text);
      host.fileChanged(m.uri, 'changed');
      return;
    case 'file':
      host.fileChanged(m.uri, m.change);
      return;
    case 'analyze':
      void ready.then(() => {
        try {
          // A function cannot cross to the main thread (structured clone): the what-if is rebuilt there from the graph.
          const { whatIf: _w, ...analysis } = analyzeDocument(m.input, host, core());
          post({ type: 'result', id: m.id, analysis });
        } catch (e) {
          post({ type: 'failed', id: m.id, message: e instanceof Error ? e.message : String(e) });
        }
      });
  }
});
