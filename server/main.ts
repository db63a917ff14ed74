/**
 * The ShardLens language server process. Runs under the VS Code client (--node-ipc) or standalone for any editor
 * (`shardlens-server --stdio`); vscode-languageserver picks the transport from the command line.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './features/server';

// Two analysis workers: an expensive document never delays hovers, hints or edits of another.
startServer(createConnection(ProposedFeatures.all), { analysisWorkers: 2 });
