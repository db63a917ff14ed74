/**
 * The HTML shell of every dashboard webview: a strict Content-Security-Policy with a fresh nonce per load, and only
 * the bundled script from dist/webview. The dashboards' styles are adopted by the script (constructable stylesheets);
 * the one nonce'd style here only reveals a message if the script never starts, so no page stays on "Loading…".
 */
import * as vscode from 'vscode';
import type { DashboardView } from '../../shared/protocol';
import { contentSecurityPolicy, makeNonce } from './csp';

/** The folders a dashboard may load from: the built webview bundle and the icons. */
export function localRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')];
}

/** Seconds after which the shell says the dashboard script did not start (the script replaces the shell long before). */
const BOOT_DEADLINE_S = 15;

/**
 * The page for one dashboard (a side view) or all of them with tabs (the panel). `initial` is the dashboard a command
 * asked for; its fresh id lets the page apply it once, while reloads VS Code makes on its own keep the page's tab.
 */
export function dashboardHtml(webview: vscode.Webview, extensionUri: vscode.Uri, view: DashboardView | 'all', initial?: DashboardView): string {
  const nonce = makeNonce();
  const initialAttrs = initial ? ` data-initial="${initial}" data-initial-id="${makeNonce().replace(/[^\w]/g, '')}"` : '';
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
<style nonce="${nonce}">.late { visibility: hidden; animation: reveal 0s linear ${BOOT_DEADLINE_S}s forwards; } @keyframes reveal { to { visibility: visible; } }</style>
</head>
<body data-view="${view}"${initialAttrs}>
<main id="app" aria-live="polite"><p>Loading ShardLens…</p><p class="late">The dashboard has not started after ${BOOT_DEADLINE_S} s. If it stays like this, close this view and open it again, or run "Developer: Reload Window"; the ShardLens output may say why.</p></main>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
