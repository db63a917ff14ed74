// The public API of the estimation core. Keep this a plain list of `export *` lines.
export * from './plan/types';
export * from './plan/result';
export * from './plan/defaults';
export * from './plan/validate';
export * from './model/params';
export * from './model/presets';
export * from './model/hfConfig';
export * from './hardware/gpus';
export * from './memory/dtypes';
export * from './memory/modelStates';
export * from './memory/activations';
export * from './memory/buffers';
export * from './memory/estimate';
export * from './memory/fast';
export * from './memory/deepspeedEstimator';
