/**
 * Chart.js set-up for the dashboards: registered once, colours read from VS Code's theme variables (so light, dark
 * and high-contrast themes all work), and one registry of live charts that re-renders on theme changes.
 */
import { Chart, registerables, type ChartConfiguration, type ChartType } from 'chart.js';

Chart.register(...registerables);

/** A VS Code theme colour by CSS variable name, with a fallback. */
export function themeColor(name: string, fallback: string): string {
  const v = getComputedStyle(document.body).getPropertyValue(name).trim();
  return v || fallback;
}

/** The series palette: VS Code's chart colours (`--vscode-charts-*`). */
export function palette(): string[] {
  return [
    themeColor('--vscode-charts-blue', '#3794ff'),
    themeColor('--vscode-charts-orange', '#d18616'),
    themeColor('--vscode-charts-green', '#89d185'),
    themeColor('--vscode-charts-purple', '#b180d7'),
    themeColor('--vscode-charts-yellow', '#cca700'),
    themeColor('--vscode-charts-red', '#f14c4c'),
    themeColor('--vscode-descriptionForeground', '#999999'),
  ];
}

/** Applies theme text and grid colours to Chart.js defaults. */
export function applyThemeDefaults(): void {
  Chart.defaults.color = themeColor('--vscode-foreground', '#cccccc');
  Chart.defaults.borderColor = themeColor('--vscode-editorWidget-border', 'rgba(128,128,128,0.3)');
  Chart.defaults.font.family = themeColor('--vscode-font-family', 'sans-serif');
  Chart.defaults.font.size = 11;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  // Legends below the chart with small boxes keep narrow side views readable.
  Chart.defaults.plugins.legend.position = 'bottom';
  Chart.defaults.plugins.legend.labels.boxWidth = 10;
  Chart.defaults.plugins.legend.labels.boxHeight = 10;
}

/** A category-axis tick callback that shortens long labels (the tooltip still shows the whole label). */
export function shortTicks(labels: readonly string[]): (value: string | number, index: number) => string {
  const max = window.innerWidth < 420 ? 18 : 42;
  return (_v, i) => {
    const s = labels[i] ?? '';
    return s.length > max ? `${s.slice(0, max - 1)}…` : s;
  };
}

const live = new Set<Chart>();

/**
 * Creates a chart in a sized container. The canvas gets a text alternative (`aria-label`) and the raw figures are
 * also in a table next to it, so the chart is never the only way to read the numbers.
 */
export function makeChart<T extends ChartType>(host: HTMLElement, id: string, label: string, config: ChartConfiguration<T>, height = 240): Chart<T> {
  const box = document.createElement('div');
  box.className = 'chart-box';
  box.style.height = `${height}px`;
  const canvas = document.createElement('canvas');
  canvas.id = id;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', label);
  box.appendChild(canvas);
  host.appendChild(box);
  const chart = new Chart(canvas, config);
  live.add(chart as unknown as Chart);
  return chart;
}

/** Destroys every chart (before a view re-renders). */
export function destroyCharts(): void {
  for (const c of live) c.destroy();
  live.clear();
}

/** The live chart drawn on a canvas id, for tests and keyboard handlers. */
export function chartById(id: string): Chart | undefined {
  for (const c of live) if (c.canvas.id === id) return c;
  return undefined;
}
