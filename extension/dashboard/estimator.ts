/**
 * The memory estimator the dashboards use for the extra sharding variants and the data-parallel sweep.
 * It binds to the pure core (shared/memory) so the extension needs no extra server round trips.
 */
import { estimateMemory } from '../../shared/memory/estimate';
import type { EstimateFn } from './variants';

/** The core's estimator, the same function the server uses for the file itself. */
export const coreEstimate: EstimateFn = (plan) => estimateMemory(plan);
