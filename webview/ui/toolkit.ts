/**
 * The one module that knows which web-component toolkit the dashboards use. Every view builds its controls through
 * these helpers, so swapping the toolkit touches only this file.
 *
 * Note: @vscode/webview-ui-toolkit was deprecated upstream (microsoft/vscode-webview-ui-toolkit#561, archived
 * January 2025); @vscode-elements/elements is the usual successor and provides the same controls.
 */
import {
  provideVSCodeDesignSystem, vsCodeButton, vsCodeDivider, vsCodeDropdown, vsCodeOption, vsCodePanels,
  vsCodePanelTab, vsCodePanelView, vsCodeProgressRing,
} from '@vscode/webview-ui-toolkit';

let registered = false;

/** Registers the toolkit's custom elements once. */
export function registerToolkit(): void {
  if (registered) return;
  registered = true;
  provideVSCodeDesignSystem().register(
    vsCodeButton(), vsCodeDivider(), vsCodeDropdown(), vsCodeOption(), vsCodePanels(), vsCodePanelTab(),
    vsCodePanelView(), vsCodeProgressRing(),
  );
}

/** A button; `secondary` uses the secondary appearance. */
export function button(label: string, onClick: () => void, opts: { id?: string; secondary?: boolean; disabled?: boolean; title?: string } = {}): HTMLElement {
  const b = document.createElement('vscode-button');
  b.textContent = label;
  if (opts.id) b.id = opts.id;
  if (opts.secondary) b.setAttribute('appearance', 'secondary');
  if (opts.disabled) b.setAttribute('disabled', '');
  if (opts.title) b.title = opts.title;
  b.addEventListener('click', () => { if (!b.hasAttribute('disabled')) onClick(); });
  return b;
}

/** A dropdown of options; calls `onChange` with the chosen value. */
export function dropdown(label: string, options: readonly { value: string; text: string }[], value: string, onChange: (v: string) => void, id?: string): HTMLElement {
  const wrap = document.createElement('label');
  wrap.className = 'field';
  const text = document.createElement('span');
  text.textContent = label;
  const d = document.createElement('vscode-dropdown') as HTMLElement & { value: string };
  if (id) d.id = id;
  d.setAttribute('aria-label', label);
  for (const o of options) {
    const opt = document.createElement('vscode-option');
    opt.setAttribute('value', o.value);
    opt.textContent = o.text;
    if (o.value === value) opt.setAttribute('selected', '');
    d.appendChild(opt);
  }
  d.addEventListener('change', () => onChange(d.value));
  wrap.append(text, d);
  return wrap;
}

/**
 * A small badge, e.g. "fits" or "does not fit". Plain HTML: the toolkit's badge template carries an inline style
 * attribute, which the dashboards' Content-Security-Policy (no 'unsafe-inline') rightly blocks.
 */
export function badge(text: string, kind: 'ok' | 'bad' | 'warn' | 'info' = 'info'): HTMLElement {
  const b = document.createElement('span');
  b.textContent = text;
  b.className = `badge badge-${kind}`;
  return b;
}

export function divider(): HTMLElement {
  return document.createElement('vscode-divider');
}

export function spinner(): HTMLElement {
  const r = document.createElement('vscode-progress-ring');
  r.setAttribute('aria-label', 'Working');
  return r;
}

/** Tabs: one tab and one view per entry; `onSelect` receives the id of the tab the user opens. */
export function tabs(entries: readonly { id: string; title: string; body: HTMLElement }[], active: string, onSelect: (id: string) => void): HTMLElement & { select(id: string): void } {
  const panels = document.createElement('vscode-panels') as HTMLElement & { activeid: string; select(id: string): void };
  panels.setAttribute('aria-label', 'ShardLens dashboards');
  for (const e of entries) {
    const tab = document.createElement('vscode-panel-tab');
    tab.id = `tab-${e.id}`;
    tab.textContent = e.title;
    panels.appendChild(tab);
  }
  for (const e of entries) {
    const view = document.createElement('vscode-panel-view');
    view.id = `view-${e.id}`;
    view.appendChild(e.body);
    panels.appendChild(view);
  }
  panels.setAttribute('activeid', `tab-${active}`);
  panels.addEventListener('change', () => {
    const id = (panels.activeid || '').replace(/^tab-/, '');
    if (id) onSelect(id);
  });
  panels.select = (id: string) => { panels.setAttribute('activeid', `tab-${id}`); panels.activeid = `tab-${id}`; };
  return panels;
}
