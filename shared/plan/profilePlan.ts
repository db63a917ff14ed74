/**
 * Attaches a measured cluster profile (shared/hardware/profile.ts) to a plan: the step-time model then times kernels and
 * collectives from the profile's curves and names it in every term's provenance. A profile measured on another device
 * than the plan's GPU is still used (the user asked for it) but says so.
 */
import { findGpu } from '../hardware/gpus';
import type { ClusterProfile } from '../hardware/profile';
import type { Plan, Problem } from './types';

/** The plan with `cluster.profile` set and its source recorded; a device mismatch adds a warning problem. */
export function withProfile(plan: Plan, profile: ClusterProfile, problems: Problem[]): Plan {
  const measured = findGpu(profile.device);
  if (!measured || measured.id !== plan.cluster.gpu.id) {
    problems.push({
      code: 'profile-device', severity: 'warning', paths: ['cluster.gpu'],
      message: `The cluster profile ${profile.source} was measured on ${profile.device}, not on the plan's ${plan.cluster.gpu.name}: its curves are used as measured.`,
    });
  }
  return {
    ...plan,
    cluster: { ...plan.cluster, profile },
    sources: { ...plan.sources, 'cluster.profile': { kind: 'setting', detail: `measured profile ${profile.source} (${profile.device}, ${profile.createdAt})` } },
  };
}
