/** Commands that open the dashboards: Open Dashboard, Simulate Step, and the hovers' "More" link (the derivation). */
import type { DashboardView } from '../../shared/protocol';
import type { CommandFactory, Ctx } from '../ctx';
import { DashboardPanel } from '../dashboard/panel';

/** Opens (or reveals) the panel on `view` for the command's target file and brings its figures up to date. */
export async function openDashboard(ctx: Ctx, view: DashboardView, arg: unknown): Promise<void> {
  const uri = ctx.targetUri(arg);
  DashboardPanel.show(ctx.extensionUri, ctx.hub, view);
  if (uri && uri !== ctx.hub.uri) await ctx.hub.setUri(uri);
  else await ctx.hub.refresh();
}

export const openDashboardCmd: CommandFactory = (ctx) => (arg) => openDashboard(ctx, 'memory', arg);

/** Simulate Step opens the panel on its tab, or switches an open panel to it. */
export const simulateStep: CommandFactory = (ctx) => (arg) => openDashboard(ctx, 'simulation', arg);

/** The hovers' "More" link: the full derivation of a figure in the dashboard (memory, or time for step figures). */
export const showDerivation: CommandFactory = (ctx) => (arg, view) =>
  openDashboard(ctx, view === 'communication' || view === 'simulation' ? view : 'memory', arg);
