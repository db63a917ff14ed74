/**
 * The dashboard panel (an editor tab with all dashboards as tabs) and the side-bar webview views (one dashboard
 * each). The panel is restored after a reload by a serializer; the page keeps its own UI state with setState.
 */
import * as vscode from 'vscode';
import { WEBVIEW_PROTOCOL_VERSION, type DashboardView } from '../../shared/protocol';
import { isDashboardView } from '../../webview/protocol/guards';
import { dashboardHtml, localRoots } from './html';
import type { BootWatch } from './bootWatch';
import type { DashboardHub } from './hub';

export const PANEL_VIEW_TYPE = 'shardlens.dashboard';
/** Side-bar view ids, one per dashboard (declared in package.json `contributes.views.shardlens`). */
export const VIEW_IDS: Readonly<Record<DashboardView, string>> = {
  memory: 'shardlens.memoryView',
  communication: 'shardlens.communicationView',
  simulation: 'shardlens.simulationView',
  validation: 'shardlens.validationView',
  layouts: 'shardlens.layoutsView',
};

export class DashboardPanel {
  static current: DashboardPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  /** The page's boot watch (bootWatch.ts), told of every load the panel makes. */
  private readonly boot: BootWatch | undefined;
  /** The dashboard the page was last loaded asking for (a reload by the boot watch asks for it again). */
  private initial: DashboardView | undefined;

  private constructor(private readonly panel: vscode.WebviewPanel, private readonly extensionUri: vscode.Uri, hub: DashboardHub, initial?: DashboardView) {
    panel.webview.options = { enableScripts: true, localResourceRoots: localRoots(extensionUri) };
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'shardlens.svg');
    // A new page cannot receive messages until its script runs, so the first dashboard to show is in the HTML.
    this.initial = initial;
    panel.webview.html = dashboardHtml(panel.webview, extensionUri, 'all', initial);
    const attached = hub.attach(panel.webview, {
      what: 'ShardLens dashboard panel', visible: () => panel.visible,
      reload: () => { panel.webview.html = dashboardHtml(panel.webview, extensionUri, 'all', this.initial); },
    });
    this.boot = attached.boot;
    this.disposables.push(attached, panel.onDidChangeViewState(() => this.boot?.visibilityChanged()), panel.onDidDispose(() => this.dispose()));
  }

  /** Loads the page again asking for `view` (a hidden page does not exist and would miss a `show` message). */
  private load(view: DashboardView): void {
    this.initial = view;
    this.panel.webview.html = dashboardHtml(this.panel.webview, this.extensionUri, 'all', view);
    this.boot?.loading();
  }

  /**
   * Opens the panel on one dashboard, or switches an open one to it. A visible page gets a `show` message; a hidden
   * page does not exist (no retainContextWhenHidden) and would miss it, so it is loaded again asking for `view`.
   */
  static show(extensionUri: vscode.Uri, hub: DashboardHub, view: DashboardView): void {
    const current = DashboardPanel.current;
    if (!current) {
      const panel = vscode.window.createWebviewPanel(PANEL_VIEW_TYPE, 'ShardLens', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: true, retainContextWhenHidden: false, localResourceRoots: localRoots(extensionUri),
      });
      DashboardPanel.current = new DashboardPanel(panel, extensionUri, hub, view);
      return;
    }
    const webview = current.panel.webview;
    if (current.panel.visible) {
      void webview.postMessage({ v: WEBVIEW_PROTOCOL_VERSION, type: 'show', view });
      current.panel.reveal(undefined, true);
      return;
    }
    current.load(view);
    current.panel.reveal(undefined, true);
  }

  /** Restores a panel after a reload (VS Code passes the page's last setState value, which the page reads itself). */
  static serializer(extensionUri: vscode.Uri, hub: DashboardHub): vscode.WebviewPanelSerializer {
    return {
      deserializeWebviewPanel: async (panel: vscode.WebviewPanel) => {
        DashboardPanel.current?.dispose();
        DashboardPanel.current = new DashboardPanel(panel, extensionUri, hub);
      },
    };
  }

  dispose(): void {
    if (DashboardPanel.current === this) DashboardPanel.current = undefined;
    this.panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A side-bar webview view showing one dashboard. */
export class DashboardViewProvider implements vscode.WebviewViewProvider {
  constructor(private readonly view: DashboardView, private readonly extensionUri: vscode.Uri, private readonly hub: DashboardHub) {}

  resolveWebviewView(webviewView: vscode.WebviewView): void {
    webviewView.webview.options = { enableScripts: true, localResourceRoots: localRoots(this.extensionUri) };
    const load = () => { webviewView.webview.html = dashboardHtml(webviewView.webview, this.extensionUri, this.view); };
    load();
    const sub = this.hub.attach(webviewView.webview, { what: `ShardLens ${this.view} view`, visible: () => webviewView.visible, reload: load });
    const seen = webviewView.onDidChangeVisibility(() => sub.boot?.visibilityChanged());
    webviewView.onDidDispose(() => { seen.dispose(); sub.dispose(); });
  }
}

/** Registers the panel serializer and the side-bar views. */
export function registerDashboards(extensionUri: vscode.Uri, hub: DashboardHub): vscode.Disposable[] {
  return [
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, DashboardPanel.serializer(extensionUri, hub)),
    ...(Object.keys(VIEW_IDS) as string[]).filter(isDashboardView).map((v) =>
      vscode.window.registerWebviewViewProvider(VIEW_IDS[v], new DashboardViewProvider(v, extensionUri, hub))),
  ];
}
