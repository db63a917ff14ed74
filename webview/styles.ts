/** The dashboards' stylesheet: VS Code theme variables only, readable from ~240 px side-bar widths. */
export const STYLES = `
body { color: var(--vscode-foreground); background: var(--vscode-sideBar-background, var(--vscode-editor-background)); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 0 8px 16px; }
h1 { font-size: 1.15em; margin: 10px 0 4px; }
h2 { font-size: 1.05em; margin: 4px 0 8px; }
h3 { font-size: 1em; margin: 8px 0 4px; }
.muted { color: var(--vscode-descriptionForeground); }
.card { margin: 10px 0; }
vscode-panel-view > .view { flex: 1 1 auto; min-width: 0; width: 100%; }
/* Five tabs fit a half-width panel at 1280 px: the toolkit's 32 px gap between tabs is too wide for it. */
vscode-panels::part(tablist) { column-gap: 14px; }
.summary { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center; }
.chart-box { position: relative; width: 100%; min-width: 0; margin: 6px 0; }
.toolbar { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }
.field { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 4px 0; }
details.data summary { cursor: pointer; color: var(--vscode-textLink-foreground); }
details.data summary:focus-visible, canvas:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
/* Tables scroll inside their own box with a scrollbar that is always visible, so no column is clipped. */
.table-wrap, details.data { max-width: 100%; overflow-x: auto; scrollbar-width: thin; scrollbar-color: var(--vscode-scrollbarSlider-background, rgba(121,121,121,0.4)) transparent; }
.table-wrap::-webkit-scrollbar, details.data::-webkit-scrollbar { height: 10px; }
.table-wrap::-webkit-scrollbar-thumb, details.data::-webkit-scrollbar-thumb { background: var(--vscode-scrollbarSlider-background, rgba(121,121,121,0.4)); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 2px 6px; border-bottom: 1px solid var(--vscode-editorWidget-border, rgba(128,128,128,0.3)); white-space: nowrap; vertical-align: top; }
th[scope=row], thead th:first-child { text-align: left; }
/* Tables with long texts wrap them, so they fit the panel instead of scrolling. */
table.wrapping { width: 100%; }
table.wrapping td.text { white-space: normal; text-align: left; overflow-wrap: anywhere; min-width: 12ch; }
table.wrapping th.text { text-align: left; }
td.refused { color: var(--vscode-editorWarning-foreground); }
.badge { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 0.9em; line-height: 1.5; color: var(--vscode-badge-foreground); background: var(--vscode-badge-background); }
.badge-ok { color: var(--vscode-editor-background, #1e1e1e); background: var(--vscode-testing-iconPassed, #73c991); }
.badge-bad { color: var(--vscode-editor-background, #1e1e1e); background: var(--vscode-errorForeground, #f14c4c); }
.badge-warn { color: var(--vscode-editor-background, #1e1e1e); background: var(--vscode-editorWarning-foreground, #cca700); }
.verdict { font-weight: 600; }
.verdict-ok { color: var(--vscode-testing-iconPassed, #73c991); }
.verdict-bad { color: var(--vscode-errorForeground, #f14c4c); }
.verdict-warn { color: var(--vscode-editorWarning-foreground, #cca700); }
.status-line { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 10px 0; }
.validation-headline { font-size: 1.05em; }
.problems li.error { color: var(--vscode-errorForeground); }
.problems li.warning { color: var(--vscode-editorWarning-foreground); }
.progress { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.state-failed { color: var(--vscode-errorForeground); }
ul { padding-left: 18px; margin: 4px 0; }
`;
