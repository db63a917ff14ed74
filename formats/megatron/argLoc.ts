/** Where a Megatron flag's facts and diagnostics point: its range in this document, or its sourced file. */
import type { TextRange } from '../../shared/plan/types';
import type { FlagArg } from '../common/shell/commandLine';
import type { Loc } from '../common/sink';

/** A range in this document, or none when the flag was written in a sourced file (the diagnostic goes to the top). */
export function here(a: FlagArg, r: TextRange | undefined): TextRange | undefined {
  return a.uri ? undefined : r;
}

export function locOfArg(a: FlagArg): Loc {
  return { key: a.spelled ?? a.flag, keyRange: a.flagRange, valueRange: a.valueRange ?? a.flagRange, uri: a.uri };
}
