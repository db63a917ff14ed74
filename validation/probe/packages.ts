/** npm packages that provide the native TensorFlow.js backends (optional dependencies). */
import type { BackendName } from '../types';

export const NATIVE_PACKAGE_NAMES: Readonly<Partial<Record<BackendName, string>>> = {
  'tensorflow-gpu': '@tensorflow/tfjs-node-gpu',
  tensorflow: '@tensorflow/tfjs-node',
};
