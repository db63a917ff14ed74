/**
 * The HTML shell of every dashboard webview: a strict Content-Security-Policy with a fresh nonce per load, and only
 * the bundled script from dist/webview. Styles are adopted by the script (constructable stylesheets), so no inline
 * style or script is allowed.
 */
import * as vscode from 'vscode';
import type { DashboardView } from '../../shared/protocol';
import { contentSecurityPolicy, makeNonce } from './csp';

/** The folders a dashboard may load from: the built webview bundle and the icons. */
export function localRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')];
}

/** The page for one dashboard (a side view) or all of them with tabs (the panel). */
export function dashboardHtml(webview: vscode.Webview, extensionUri: vscode.Uri, view: DashboardView | 'all', initial?: DashboardView): string {
  const nonce = makeNonce();
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'webview.js'));
  const title = view === 'all' ? 'ShardLens dashboard' : `ShardLens ${view}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta property="csp-nonce" content="${nonce}">
<title>${title}</title>
</head>
<body data-view="${view}"${initial ? ` data-initial="${initial}"` : ''}>
<main id="app" aria-live="polite"><p class="muted">Loading ShardLens…</p></main>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
