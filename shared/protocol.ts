/**
 * The one typed protocol of ShardLens: every custom LSP request/notification between server and extension, and every
 * message between the extension and its webviews. Server and extension import it; it stays pure (no vscode, LSP
 * server/client or DOM imports). The LSP messages are typed RequestType/NotificationType values declared once in
 * `protocol/lsp.ts`; the webview bundle imports `protocol/webview.ts` and `protocol/settings.ts` directly, so it never
 * carries the JSON-RPC library.
 */
export const PROTOCOL_VERSION = 1;

export * from './protocol/settings';
export * from './protocol/commands';
export * from './protocol/lsp';
export * from './protocol/webview';
