/**
 * What a missing referenced file leaves unknown, in words: a YAML that names a DeepSpeed JSON which is not there
 * gives one clear diagnostic at the reference, and the estimate says which values it therefore does not know. Pure.
 */

/** The values a DeepSpeed config decides, as users know them. */
export const DEEPSPEED_DECIDES = 'ZeRO stage, optimizer and parameter offload, and the communication buckets';

/**
 * The loader's sentence about a DeepSpeed file it could not read ("… was not found …" or "… was not read: …"), then
 * what is therefore unknown: "Its ZeRO stage, … are unknown: the estimate uses no ZeRO sharding and no offload."
 */
export function missingDeepSpeedMessage(loaderMessage: string, used: { readonly sharding: string; readonly offload: string }): string {
  return `${loaderMessage.trim()} Its ${DEEPSPEED_DECIDES} are therefore unknown: `
    + `the estimate uses ${used.sharding} and ${used.offload === 'none' ? 'no offload' : `${used.offload} offload`} until the file is there.`;
}

/** The short form for verdicts: "ds_z3_config.json (missing)". */
export function missingFileLabel(target: string): string {
  return target.replace(/^.*[\\/]/, '');
}
