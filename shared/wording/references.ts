/**
 * What a missing referenced file leaves unknown, in words: a YAML that names a DeepSpeed JSON which is not there
 * gives one clear diagnostic at the reference, and the estimate says which values it therefore does not know. Pure.
 */

/** The values a DeepSpeed config decides, as users know them. */
export const DEEPSPEED_DECIDES = 'ZeRO stage, optimizer and parameter offload, and the communication buckets';

/** "DeepSpeed config "ds_z3.json" was not found …: ZeRO stage, … are unknown; the estimate uses ZeRO-0 (no sharding) and no offload." */
export function missingDeepSpeedMessage(target: string, used: { readonly sharding: string; readonly offload: string }): string {
  return `DeepSpeed config "${target}" was not found next to this file or in the workspace, so its ${DEEPSPEED_DECIDES} are unknown: `
    + `the estimate uses ${used.sharding} and ${used.offload === 'none' ? 'no offload' : `${used.offload} offload`} until the file is there.`;
}

/** The short form for verdicts: "ds_z3_config.json (missing)". */
export function missingFileLabel(target: string): string {
  return target.replace(/^.*[\\/]/, '');
}
