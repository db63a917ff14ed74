/** Typed reads of merged facts, and the source of a value a setting gave (shared by gathering and its helpers). */
import type { SettingId } from '../protocol/commands';
import type { Fact } from './facts';
import type { PlanPath } from './paths';
import type { InputSource } from './types';

export type Facts = Readonly<Partial<Record<PlanPath, Fact>>>;

/** A finite number fact, or undefined. */
export const num = (f: Facts, p: PlanPath): number | undefined => {
  const v = f[p]?.value;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};
/** A string fact other than "auto" (a value only the run fills), or undefined. */
export const str = (f: Facts, p: PlanPath): string | undefined => {
  const v = f[p]?.value;
  return typeof v === 'string' && v !== 'auto' ? v : undefined;
};
/** A boolean fact, or undefined. */
export const bool = (f: Facts, p: PlanPath): boolean | undefined => {
  const v = f[p]?.value;
  return typeof v === 'boolean' ? v : undefined;
};

/** The source of a value taken from a setting, named by its contributed id. */
export function fromSetting(id: SettingId): InputSource {
  return { kind: 'setting', detail: id };
}
