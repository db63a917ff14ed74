/**
 * "Analyse This Configuration Function": a code lens of a module of configuration functions (torchtitan's Python
 * configurations) asks the server to analyse that function from now on. Only the lens calls it, with the document URI
 * and the function's name; anything else is ignored.
 */
import { isConfigurationName, SelectConfigurationNotification } from '../../shared/protocol';
import type { CommandFactory } from '../ctx';

/** The notification's parameters from the lens arguments, or undefined when they are not a URI and a function name. */
export function selectionOf(uri: unknown, symbol: unknown): { uri: string; symbol: string } | undefined {
  if (typeof uri !== 'string' || !/^[a-z][a-z0-9+.-]*:/i.test(uri) || uri.length > 4096) return undefined;
  if (!isConfigurationName(symbol)) return undefined;
  return { uri, symbol };
}

export const selectConfigurationCmd: CommandFactory = (ctx) => async (uri, symbol) => {
  const params = selectionOf(uri, symbol);
  const client = ctx.client;
  if (!params || !client) return;
  await client.sendNotification(SelectConfigurationNotification, params);
};
