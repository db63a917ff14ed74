/**
 * The one typed protocol of ShardLens: every custom LSP request/notification between server and extension, and every
 * message between the extension and its webviews. Server, extension and webview import it; it stays pure (no
 * vscode, LSP or DOM imports): each side wraps the method names in its own RequestType/NotificationType.
 */
export const PROTOCOL_VERSION = 1;

export * from './protocol/settings';
export * from './protocol/commands';
export * from './protocol/lsp';
export * from './protocol/webview';
