/** Public entry points of the torchrun probe integration (CLI `shardlens probe`, extension "Run on PyTorch"). */
export { runProbe, isProbeFailure, localArgv, defaultProbeDir, type RunProbeOptions } from './launch';
export { clusterCommands, shellQuote, type ClusterCommands, type ClusterOptions } from './cluster';
export { exportProbePlan, comparablePlanFor, isExportProblem, modeForPlan, stageOfMode, type ExportOptions, type ExportedProbePlan } from './exportPlan';
export { findPython, pythonCandidates, inspectPython, type PythonInfo } from './python';
export { parseProbeReport, validateProbeReport, PROBE_REPORT_SCHEMA, PROBE_REPORT_SCHEMA_VERSION } from './report';
export { compareReport, withEstimates, coreRankEstimate, collectiveFamilies, type ProbeComparison, type TermComparison, type CoreRankEstimate } from './compare';
export { expectedCollectives, expectedModelStates, zeroRedundancyPartition } from './expected';
export { calibrate, applyCalibration, CALIBRATION_SETTING, type ClusterCorrection } from './calibrate';
export { scaleProbeModel, probeModelOf, probeParameters } from './scale';
export * from './types';
export { probeAndCompare, type ProbeOutcome } from './session';
export { probeCommand, parseProbeMode, type ProbeCliOptions } from './cliCommand';
